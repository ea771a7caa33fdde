"""A fused activation's float bounds as a clamp of the quantised output, in each mode's arithmetic.

QuantizeLinear is monotone, so ``Q(clip(v, a, b)) = clip(Q(v), Q(a), Q(b))``
and ``Q(relu(v)) = max(Q(v), Q(0))``: a Relu or Clip between a layer and its
QuantizeLinear becomes ``output_min``/``output_max`` on the fused node, with no
error at all — provided ``Q`` of the bound is computed the way the mode's
reference quantises:

* exact (ONNX Runtime): ``bound / scale`` in float32, rounded half to even;
* fixed-point (TFLite): ``zero_point + round(bound / scale)`` with the
  division in float32 and rounding half away from zero, as TFLite derives a
  fused activation's range.
"""

from __future__ import annotations

import math

import numpy as np

ARITHMETICS = ("float32", "tflite")


def quantized_bound(bound: float, scale: float, zero: int, dtype: np.dtype, arithmetic: str) -> int:
    """``bound`` quantised with ``scale``/``zero`` and saturated to ``dtype``'s range."""
    if arithmetic not in ARITHMETICS:
        raise ValueError(f"unknown arithmetic {arithmetic!r}; expected one of {ARITHMETICS}")
    info = np.iinfo(dtype)
    with np.errstate(over="ignore", divide="ignore"):
        ratio = float(np.float32(bound) / np.float32(scale))
    if not math.isfinite(ratio):
        return int(info.max) if ratio > 0 else int(info.min)
    if arithmetic == "float32":
        rounded = float(np.rint(ratio))
    else:
        rounded = math.floor(abs(ratio) + 0.5) * (1.0 if ratio >= 0 else -1.0)
    return int(min(max(rounded + zero, info.min), info.max))


def activation_range(op: str, bounds: tuple[float | None, float | None], scale: float, zero: int, dtype: np.dtype,
                     arithmetic: str) -> tuple[int, int]:
    """(output_min, output_max) of a Relu (bounds ignored) or Clip (None: unbounded on that side)."""
    info = np.iinfo(dtype)
    low, high = (0.0, None) if op == "Relu" else bounds
    return (int(info.min) if low is None else quantized_bound(low, scale, zero, dtype, arithmetic),
            int(info.max) if high is None else quantized_bound(high, scale, zero, dtype, arithmetic))
