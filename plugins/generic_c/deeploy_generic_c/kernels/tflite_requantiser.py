"""Requantisation of Conv, MatMul and Gemm accumulators exactly as TFLite's reference int8 kernels do it.

A model converted from ``.tflite`` promises LiteRT's outputs, and TFLite's
requantisation differs from ONNX Runtime's float32 one: it derives a 31-bit
multiplier and a shift from ``double(s_in) · double(s_w[c]) / double(s_out)``
(:func:`~deeploy_generic_c.parsing.tflite_arithmetic.quantize_multiplier`) and
rounds twice: a doubling high multiply (halves up), then a rounding right
shift (halves away from zero).  :class:`TfliteRequantiser` derives the same parameters and emits
calls to ``dcg_tfl_requantize`` (``dcg_tflite.h``), so each layer equals
LiteRT's bit for bit given the same inputs.  Same interface as
:class:`~deeploy_generic_c.kernels.qlinear_requantisers.Requantiser` and ``FloatRequantiser``.

LiteRT's FullyConnected kernels (which tf2onnx writes as MatMul, fused into
QGemm or QLinearMatMul) round once instead, the exact product halves up
(measured against BUILTIN_REF: every tie differs otherwise, per tensor and per
channel): :class:`TfliteFullyConnectedRequantiser`; :func:`for_op` picks the
class of a fused op.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.plugin_api import Buffer, NodeMismatch
from deeploy_generic_c.parsing.tflite_arithmetic import TfliteParameterError, linear_multipliers

HEADER = "dcg_tflite.h"
"""The runtime header defining ``dcg_tfl_requantize``."""
MAX_LEFT_SHIFT = 31
"""TFLite shifts the accumulator left by a positive shift in 32 bits; beyond 31 every bit is gone."""
SINGLE_ROUNDING_OPS = frozenset({"QGemm", "QLinearMatMul"})
"""Fused ops that stand for TFLite's FullyConnected (one rounding); QLinearConv stands for Conv/DepthwiseConv."""


class TfliteRequantiser:
    """``y = clamp(zero + MultiplyByQuantizedMultiplier(acc, m[c], shift[c]))`` in TFLite's integer arithmetic.

    ``low``/``high`` start as the output type's range; a fused activation
    (``output_min``/``output_max``) narrows them after construction.
    """

    ROUNDING = "double"
    FUNCTION = "dcg_tfl_requantize"
    MAX_SHIFT = MAX_LEFT_SHIFT

    def __init__(self, multipliers: list[int], shifts: list[int], output: Buffer, zero: int) -> None:
        for shift in shifts:
            if shift > self.MAX_SHIFT:
                raise NodeMismatch("attribute", f"requantisation shift {shift} is beyond TFLite's range "
                                                f"(at most {self.MAX_SHIFT}: the scale is 2^{shift - 1} or more)")
        self.multipliers, self.shifts = multipliers, shifts
        self.output, self.zero = output, int(zero)
        info = np.iinfo(output.dtype.numpy)
        self.low, self.high = int(info.min), int(info.max)

    @classmethod
    def from_parts(cls, x_scale: float, w_scales: np.ndarray, y_scale: float, count: int, output: Buffer,
                   zero: int) -> "TfliteRequantiser":
        """One (multiplier, shift) per weight scale (``count`` channels, or one per tensor), derived as TFLite does."""
        scales = np.broadcast_to(np.asarray(w_scales, np.float64).reshape(-1), (count,))
        if np.all(scales == scales[0]):
            scales = scales[:1]
        try:
            multipliers, shifts = linear_multipliers(x_scale, scales, y_scale)
        except TfliteParameterError as error:
            raise NodeMismatch("attribute", f"TFLite requantisation: {error}") from None
        return cls(multipliers, shifts, output, zero)

    def declarations(self) -> str:
        """Block-scope tables of the multipliers and shifts."""
        count = len(self.multipliers)
        return (f"static const int32_t tfl_multiplier[{count}] = {{{', '.join(map(str, self.multipliers))}}};\n"
                f"static const int8_t tfl_shift[{count}] = {{{', '.join(map(str, self.shifts))}}};")

    def store(self, target: str, acc: str, channel: str) -> str:
        """C statement requantising the int32 expression ``acc`` into ``target``."""
        index = channel if len(self.multipliers) > 1 else "0"
        return (f"{target} = ({self.output.dtype.c_type}){self.FUNCTION}((int32_t)({acc}), tfl_multiplier[{index}], "
                f"tfl_shift[{index}], {self.zero}, {self.low}, {self.high});")

    def describe(self) -> dict[str, object]:
        """The parameters shown by ``analyze`` and ``report.json``."""
        single = len(self.multipliers) == 1
        return {"arithmetic": "tflite", "rounding": self.ROUNDING,
                "multiplier": self.multipliers[0] if single else self.multipliers,
                "shift": self.shifts[0] if single else self.shifts,
                "zero_point": self.zero, "range": [self.low, self.high]}


class TfliteFullyConnectedRequantiser(TfliteRequantiser):
    """As :class:`TfliteRequantiser`, rounding the exact product once (halves up), as LiteRT's FullyConnected does."""

    ROUNDING = "single"
    FUNCTION = "dcg_tfl_requantize_single"
    MAX_SHIFT = 30
    """One rounding shifts the 64-bit product right by ``31 - shift``, at least one bit."""


def for_op(op: str) -> type[TfliteRequantiser]:
    """The requantiser of a fused op: FullyConnected's single rounding for QGemm/QLinearMatMul, else Conv's."""
    return TfliteFullyConnectedRequantiser if op in SINGLE_ROUNDING_OPS else TfliteRequantiser
