"""TFLite's integer parameters, derived from float scales exactly as its int8 kernels' Prepare functions do.

``--quantization fixed-point`` promises LiteRT's reference int8 kernels' outputs
bit for bit, and CMSIS-NN (what TensorFlow Lite Micro calls on Cortex-M)
computes the same arithmetic from the same parameters.  Those kernels never
touch a float at run time, but they derive their integer parameters from the
tensors' float32 scales once, in double precision, with choices of their own
(how the multiplier is rounded, where the shift saturates, Add's 20-bit
headroom, Softmax's Q5.26 input).  A parameter one unit off changes outputs,
so every platform that runs TFLite's arithmetic takes its parameters from this
one module (the plugin API exports it as ``tflite_parameters``).

Conventions follow TFLite's: a quantised multiplier is ``(m, shift)`` with
``m`` in ``[2^30, 2^31)`` (or 0) standing for ``m · 2^(shift - 31)``; a
positive shift multiplies, a negative one divides.
"""


from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
ADD_LEFT_SHIFT = 20
"""Bits of headroom Add gives both 8-bit operands before rescaling them to a common scale."""
SOFTMAX_INPUT_INTEGER_BITS = 5
"""Softmax feeds exp() differences in Q5.26: integer part down to -32, where exp is below one output step."""
SOFTMAX_ACCUMULATION_INTEGER_BITS = 12
"""Softmax sums its exponentials in Q12.19 (up to 4096 terms of at most one)."""


class TfliteParameterError(ValueError):
    """A scale TFLite's kernels would refuse (its Prepare aborts), with the reason."""


# ---------------------------------------------------------------------------------------------------------------
# Parameter derivation (double precision, as TFLite's Prepare functions do it)
# ---------------------------------------------------------------------------------------------------------------

def round_half_away(value: float) -> int:
    """``std::round``: the nearest integer, halves away from zero (exact for every double)."""
    magnitude = abs(value)
    floor = math.floor(magnitude)
    result = floor + 1 if magnitude - floor >= 0.5 else floor  # the subtraction is exact below 2^52
    return int(math.copysign(result, value)) if result else 0


def quantize_multiplier(real: float) -> tuple[int, int]:
    """``(m, shift)`` with ``real ≈ m · 2^(shift - 31)``, derived as TFLite's QuantizeMultiplier derives it.

    The significand of ``frexp`` (in [0.5, 1)) is scaled to 31 bits and
    rounded half away from zero; when that rounds up to 2^31 the pair is
    renormalised.  A value below about 2^-32 flushes to ``(0, 0)`` (all bits
    would be shifted out), which TFLite chose over shifts beyond 31.
    """
    if not math.isfinite(real) or real < 0:
        raise TfliteParameterError(f"multiplier {real} must be finite and non-negative")
    if real == 0.0:
        return 0, 0
    significand, shift = math.frexp(real)
    fixed = round_half_away(significand * 2.0**31)
    if fixed == 2**31:
        fixed, shift = fixed // 2, shift + 1
    if shift < -31:
        return 0, 0
    return fixed, shift


def quantize_multiplier_below_one(real: float) -> tuple[int, int]:
    """QuantizeMultiplierSmallerThanOneExp: as :func:`quantize_multiplier`, for ``0 < real < 1`` (shift ≤ 0)."""
    if not 0.0 < real < 1.0:
        raise TfliteParameterError(f"multiplier {real} must lie in (0, 1)")
    multiplier, shift = quantize_multiplier(real)
    if shift > 0:
        raise TfliteParameterError(f"multiplier {real} rounds up to 1")
    return multiplier, shift


def quantize_multiplier_above_one(real: float) -> tuple[int, int]:
    """QuantizeMultiplierGreaterThanOne: as :func:`quantize_multiplier`, for ``real > 1`` (shift ≥ 0)."""
    if not real > 1.0:
        raise TfliteParameterError(f"multiplier {real} must exceed 1")
    return quantize_multiplier(real)


def _double(scale: float) -> float:
    """A tensor scale as TFLite holds it (float32), widened to double."""
    return float(np.float32(scale))


def effective_scale(input_scale: float, weight_scale: float, output_scale: float) -> float:
    """Conv / depthwise Conv / FullyConnected: ``double(s_in) · double(s_w) / double(s_out)``, left to right."""
    return _double(input_scale) * _double(weight_scale) / _double(output_scale)


def linear_multipliers(input_scale: float, weight_scales: np.ndarray, output_scale: float
                       ) -> tuple[list[int], list[int]]:
    """Per-channel (or one per-tensor) multipliers and shifts of a Conv/FullyConnected layer."""
    pairs = [quantize_multiplier(effective_scale(input_scale, float(w), output_scale))
             for w in np.asarray(weight_scales, np.float64).reshape(-1)]
    return [m for m, _ in pairs], [s for _, s in pairs]


@dataclass(frozen=True)
class AddParameters:
    """Add's integer parameters: both operands shifted left by ``left_shift``, rescaled, summed, rescaled."""

    left_shift: int
    input1: tuple[int, int]
    input2: tuple[int, int]
    output: tuple[int, int]


def add_parameters(scale1: float, scale2: float, output_scale: float) -> AddParameters:
    """Add (int8/uint8): the operands are brought to ``2 · max(s1, s2)``, 20 bits of headroom, then to ``s_out``."""
    s1, s2, so = _double(scale1), _double(scale2), _double(output_scale)
    twice_max = 2.0 * max(s1, s2)
    return AddParameters(
        left_shift=ADD_LEFT_SHIFT,
        input1=quantize_multiplier_below_one(s1 / twice_max),
        input2=quantize_multiplier_below_one(s2 / twice_max),
        output=quantize_multiplier_below_one(twice_max / ((1 << ADD_LEFT_SHIFT) * so)))


def mul_parameters(scale1: float, scale2: float, output_scale: float) -> tuple[int, int]:
    """Mul (int8/uint8): one multiplier for ``double(s1) · double(s2) / double(s_out)``."""
    return quantize_multiplier(_double(scale1) * _double(scale2) / _double(output_scale))


@dataclass(frozen=True)
class SoftmaxParameters:
    """Softmax's parameters: differences ``x - max`` are scaled to Q5.26 by ``(multiplier, left_shift)``.

    Differences below ``diff_min`` would scale below -32 (or overflow); their
    exponential is under one output step, so the kernel outputs the minimum.
    """

    multiplier: int
    left_shift: int
    diff_min: int


def softmax_parameters(input_scale: float, beta: float = 1.0) -> SoftmaxParameters:
    """PreprocessSoftmaxScaling with 5 integer bits, and the input radius that bounds the differences."""
    bits = SOFTMAX_INPUT_INTEGER_BITS
    real = min(float(beta) * _double(input_scale) * float(1 << (31 - bits)), float((1 << 31) - 1))
    multiplier, left_shift = quantize_multiplier_above_one(real)
    if left_shift < 0:
        raise TfliteParameterError(f"softmax input scale {input_scale} gives a negative shift")
    radius = ((1 << bits) - 1) * (1 << (31 - bits)) / float(1 << left_shift)
    return SoftmaxParameters(multiplier, left_shift, -int(math.floor(radius)))


def mean_parameters(input_scale: float, output_scale: float, count: int) -> tuple[int, int]:
    """MEAN (Keras GlobalAveragePooling2D): ``s_in / s_out`` and the division by ``count`` in one multiplier.

    TFLite quantises ``double(s_in) / double(s_out)``, then folds ``1/count``
    into it in integers: the multiplier is scaled up by ``2^k`` (k = floor(log2
    count), at most 32 and at most ``31 + shift``), divided by ``count``
    (truncating) and the shift lowered by k.
    """
    if count < 1:
        raise TfliteParameterError(f"a mean over {count} elements")
    multiplier, shift = quantize_multiplier(_double(input_scale) / _double(output_scale))
    extra = min(count.bit_length() - 1, 32, 31 + shift)
    return (multiplier << extra) // count, shift - extra


def quantized_bound(bound: float, scale: float, zero: int) -> int:
    """``zero + round_half_away(bound / scale)`` with the division in float32, as TFLite quantises a fused bound."""
    quotient = np.float32(bound) / np.float32(scale)
    if not np.isfinite(quotient):
        raise TfliteParameterError(f"bound {bound} / scale {scale} is not finite")
    return int(zero) + round_half_away(float(quotient))


def activation_range(low: float | None, high: float | None, scale: float, zero: int, dtype: np.dtype
                     ) -> tuple[int, int]:
    """The output clamp of a fused Relu (0, None), Relu6 (0, 6), ReluN1To1 (-1, 1) or Clip, within the type."""
    info = np.iinfo(dtype)
    qmin, qmax = int(info.min), int(info.max)
    if low is not None:
        qmin = max(qmin, quantized_bound(low, scale, zero))
    if high is not None:
        qmax = min(qmax, quantized_bound(high, scale, zero))
    return qmin, qmax
