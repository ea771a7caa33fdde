"""Fixed-point requantisation of Conv, MatMul and Gemm that rounds as ONNX Runtime's float32 kernels do.

ONNX Runtime requantises the int32 accumulator of QLinearConv, QLinearMatMul
and QGemm as ``rint(float(acc) · scale)`` with the float32 scale
``(s_x · s_w) / s_y``: three roundings (the accumulator and the product to 24
significant bits, then to an integer).  A 31-bit multiplier applied to the
exact product rounds once and so lands on the neighbouring step whenever the
product lies within float32 error of a half step; in SqueezeNet those
one-step differences grew to five steps in the last fire module.
:class:`Float32RoundingRequantiser` keeps the arithmetic integer (the float32
scale is an exact 24-bit significand and a shift) and reproduces the three
roundings with ``dcg_requantize_float32`` (``dcg_requantize.h``), so the
layer is bit-exact with ONNX Runtime's given the same inputs.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.plugin_api import Buffer, NodeMismatch

HEADER = "dcg_requantize.h"
"""The runtime header defining ``dcg_requantize_float32``."""
SIGNIFICAND_BITS = 24
MAX_SHIFT = 62
"""Largest shift the helper takes; any larger one gives the same result (every product is below 2^56, so
``product · 2^-62 < 0.5`` already rounds to zero)."""


def significand_and_shift(scale: np.float32) -> tuple[int, int]:
    """(significand, shift) with ``scale == significand · 2^-shift`` exactly, significand < 2^24.

    A float32 holds at most 24 significant bits, so the decomposition is
    exact for every finite positive scale (subnormal ones get a smaller
    significand and a shift beyond the cap, which yields zero as they would).
    """
    value = float(scale)
    if not (value > 0 and np.isfinite(value)):
        raise NodeMismatch("attribute", f"requantisation scale {value} must be positive and finite")
    mantissa, exponent = np.frexp(np.float32(scale))  # scale = mantissa · 2^exponent, mantissa in [0.5, 1)
    significand, shift = int(mantissa * 2**SIGNIFICAND_BITS), SIGNIFICAND_BITS - int(exponent)
    if shift < 1:
        raise NodeMismatch("attribute", f"requantisation scale {value} is too large for the integer requantisation")
    return significand, min(shift, MAX_SHIFT)


class Float32RoundingRequantiser:
    """``y = clamp(rint(float(acc) · scale[c]) + zero)`` computed on integers, rounding as float32 does."""

    def __init__(self, scales: np.ndarray, output: Buffer, zero: int) -> None:
        pairs = [significand_and_shift(np.float32(value)) for value in np.asarray(scales, np.float32).reshape(-1)]
        self.significands = [significand for significand, _ in pairs]
        self.shifts = [shift for _, shift in pairs]
        self.output, self.zero = output, zero
        info = np.iinfo(output.dtype.numpy)
        self.low, self.high = int(info.min), int(info.max)

    @classmethod
    def from_parts(cls, x_scale: float, w_scale: np.ndarray, y_scale: float, count: int, output: Buffer,
                   zero: int) -> "Float32RoundingRequantiser":
        """Scales ``x_scale · w_scale[c] / y_scale`` evaluated in float32, left to right, as ONNX Runtime does."""
        products = np.float32(x_scale) * np.broadcast_to(np.asarray(w_scale, np.float32), (count,))
        return cls(products / np.float32(y_scale), output, zero)

    def declarations(self) -> str:
        """Block-scope tables of the significands and shifts."""
        count = len(self.significands)
        return (f"static const int32_t significand[{count}] = {{{', '.join(map(str, self.significands))}}};\n"
                f"static const int8_t shift[{count}] = {{{', '.join(map(str, self.shifts))}}};")

    def store(self, target: str, acc: str, channel: str) -> str:
        """C statement requantising the int32 expression ``acc`` into ``target``."""
        index = channel if len(self.significands) > 1 else "0"
        return (f"{target} = ({self.output.dtype.c_type})dcg_requantize_float32({acc}, significand[{index}], "
                f"shift[{index}], {self.zero}, {self.low}, {self.high});")

    def describe(self) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        single = len(self.significands) == 1
        return {"multiplier": self.significands[0] if single else self.significands,
                "shift": self.shifts[0] if single else self.shifts, "rounding": "float32",
                "zero_point": self.zero, "range": [self.low, self.high]}
