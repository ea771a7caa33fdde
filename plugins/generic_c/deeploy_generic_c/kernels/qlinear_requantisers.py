"""The requantisers of the QOperator kernels that are not ONNX Runtime's float32 rounding, and their C tables.

QLinearAdd/Mul and the average pools of QOperator files (ONNX Runtime dequantises and sums those in float, in
an order of its own) requantise the exact integer result once with a 31-bit multiplier and a shift
(:class:`Requantiser`, round half to even, saturate): within one LSB given the same inputs.  Exact mode's
QLinearConv, QLinearMatMul and QGemm requantise their int32 accumulator in float32 as ONNX Runtime's fused
kernels do (:class:`FloatRequantiser`).  The conv, matmul/gemm, elementwise and pooling families all use them,
so they live here rather than in one family; which requantiser a layer gets is decided by
:mod:`deeploy_generic_c.parsing.requantising`.
"""

from __future__ import annotations

import math

import numpy as np

from deeploy_core.plugin_api import Buffer, NodeMismatch

MAX_SHIFT = 62
"""Largest shift :func:`fixed_point` gives; a smaller scale is out of the fixed-point range."""


def fixed_point(real: float) -> tuple[int, int]:
    """(M0, shift) with ``real ≈ M0 · 2^-shift`` and M0 in [2^30, 2^31): 31 significant bits."""
    if not real > 0 or not math.isfinite(real):
        raise NodeMismatch("attribute", f"requantisation scale {real} must be positive and finite")
    mantissa, exponent = math.frexp(real)  # real = mantissa · 2^exponent, mantissa in [0.5, 1)
    multiplier, shift = round(mantissa * 2**31), 31 - exponent
    if multiplier == 2**31:
        multiplier, shift = 2**30, shift - 1
    if not 0 < shift <= MAX_SHIFT:
        raise NodeMismatch("attribute", f"requantisation scale {real} is out of the fixed-point range")
    return multiplier, shift


class Requantiser:
    """``y = clamp(zero + round_half_even(acc · M[c] · 2^-S[c]))``: the exact product rounded once (31-bit M)."""

    def __init__(self, multipliers: list[int], shifts: list[int], output: Buffer, zero: int) -> None:
        self.multipliers, self.shifts = multipliers, shifts
        self.output, self.zero = output, zero
        info = np.iinfo(output.dtype.numpy)
        self.low, self.high = int(info.min), int(info.max)
        self.extra: dict[str, object] = {}

    @classmethod
    def from_scales(cls, real: np.ndarray, output: Buffer, zero: int) -> "Requantiser":
        """One (multiplier, shift) pair per real scale ``s_in · s_w / s_out``."""
        pairs = [fixed_point(float(value)) for value in np.asarray(real, dtype=np.float64).reshape(-1)]
        return cls([m for m, _ in pairs], [s for _, s in pairs], output, zero)

    def declarations(self) -> str:
        """Block-scope tables of the multipliers and shifts."""
        count = len(self.multipliers)
        return (f"static const int32_t multiplier[{count}] = {{{', '.join(map(str, self.multipliers))}}};\n"
                f"static const int8_t shift[{count}] = {{{', '.join(map(str, self.shifts))}}};")

    def store(self, target: str, acc: str, channel: str) -> str:
        """C statements requantising the int32 (or int64) expression ``acc`` into ``target``.

        Rounding is half to even, like QuantizeLinear: averages and unit
        scales produce exact ties, and rounding them the other way would cost
        an LSB that then grows through the following layers.
        """
        index = channel if len(self.multipliers) > 1 else "0"
        return (f"{{ const int64_t rq_p = ((int64_t)({acc})) * multiplier[{index}]; const int rq_s = shift[{index}]; "
                f"const int64_t rq_half = (int64_t)1 << (rq_s - 1); int64_t rq_q = rq_p >> rq_s; "
                f"const int64_t rq_r = rq_p - rq_q * ((int64_t)1 << rq_s); "
                f"rq_q += (rq_r > rq_half || (rq_r == rq_half && (rq_q & 1))); const int64_t rq_t = rq_q + {self.zero}; "
                f"{target} = ({self.output.dtype.c_type})(rq_t < {self.low} ? {self.low} : (rq_t > {self.high} ? {self.high} : rq_t)); }}")

    def describe(self) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        single = len(self.multipliers) == 1
        return {"multiplier": self.multipliers[0] if single else self.multipliers,
                "shift": self.shifts[0] if single else self.shifts,
                "zero_point": self.zero, "range": [self.low, self.high], **self.extra}


class FloatRequantiser:
    """``y = clamp(rint(float(acc) · scale[c]) + zero)`` in float32, as ONNX Runtime's MLAS requantises.

    ``scale`` is ``(s_in · s_w) / s_out`` evaluated in float32 (ONNX Runtime's
    order); the product is clamped to the output range less the zero point,
    then rounded half to even by adding and subtracting 1.5 · 2^23 (exact for
    the clamped range, needs no libm), and the zero point added.  The product
    is followed by a comparison, never an addition, so no compiler can
    contract it into a fused multiply-add; the rounding steps are separate
    assignments so that a compiler evaluating float in wider precision
    (``FLT_EVAL_METHOD`` 2) still rounds each to float.
    """

    MAGIC = "12582912.0f"

    def __init__(self, scales: np.ndarray, output: Buffer, zero: int) -> None:
        self.scales = [np.float32(value) for value in np.asarray(scales, np.float32).reshape(-1)]
        self.output, self.zero = output, zero
        info = np.iinfo(output.dtype.numpy)
        self.low, self.high = int(info.min), int(info.max)

    @classmethod
    def from_parts(cls, x_scale: float, w_scale: np.ndarray, y_scale: float, count: int, output: Buffer,
                   zero: int) -> "FloatRequantiser":
        """Scales ``x_scale · w_scale[c] / y_scale`` computed in float32, left to right."""
        products = np.float32(x_scale) * np.broadcast_to(np.asarray(w_scale, np.float32), (count,))
        return cls(products / np.float32(y_scale), output, zero)

    def declarations(self) -> str:
        """Block-scope table of the float32 scales (hexadecimal literals: exact)."""
        values = ", ".join(f"{float(value).hex()}f" for value in self.scales)
        return f"static const float rq_scale[{len(self.scales)}] = {{{values}}};"

    def store(self, target: str, acc: str, channel: str) -> str:
        """C statements requantising the int32 expression ``acc`` into ``target``."""
        index = channel if len(self.scales) > 1 else "0"
        low, high = f"{float(self.low - self.zero)!r}f", f"{float(self.high - self.zero)!r}f"
        return (f"{{ float rq_v = (float)({acc}) * rq_scale[{index}]; "
                f"rq_v = rq_v < {low} ? {low} : (rq_v > {high} ? {high} : rq_v); "
                f"rq_v = rq_v + {self.MAGIC}; rq_v = rq_v - {self.MAGIC}; "
                f"{target} = ({self.output.dtype.c_type})((int32_t)rq_v + {self.zero}); }}")

    def describe(self) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        scales = [float(value) for value in self.scales]
        return {"arithmetic": "float32", "scale": scales[0] if len(scales) == 1 else scales,
                "zero_point": self.zero, "range": [self.low, self.high]}


def zero_table(name: str, zeros: np.ndarray) -> str:
    """A block-scope ``static const int32_t`` table ``name`` of the integers ``zeros`` (zero points, column sums)."""
    return f"static const int32_t {name}[{zeros.size}] = {{{', '.join(str(int(z)) for z in zeros)}}};"
