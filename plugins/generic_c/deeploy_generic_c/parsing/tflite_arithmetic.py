"""TFLite's integer arithmetic in numpy, for tests: what each of its int8 kernels computes from its parameters.

The parameters themselves are derived by the core (``tflite_parameters`` of
the plugin API), which generic C and the Cortex-M platforms share; they are
re-exported here so that the models and the kernels' tests read them from one
place.  int32 values are carried in int64 arrays and wrapped to 32 bits where
TFLite's C++ relies on two's complement overflow.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.plugin_api import tflite_parameters as _parameters

TfliteParameterError = _parameters.TfliteParameterError
AddParameters = _parameters.AddParameters
SoftmaxParameters = _parameters.SoftmaxParameters
SOFTMAX_INPUT_INTEGER_BITS = _parameters.SOFTMAX_INPUT_INTEGER_BITS
SOFTMAX_ACCUMULATION_INTEGER_BITS = _parameters.SOFTMAX_ACCUMULATION_INTEGER_BITS
INT32_MIN, INT32_MAX = _parameters.INT32_MIN, _parameters.INT32_MAX
quantize_multiplier = _parameters.quantize_multiplier
linear_multipliers = _parameters.linear_multipliers
add_parameters = _parameters.add_parameters
mul_parameters = _parameters.mul_parameters
softmax_parameters = _parameters.softmax_parameters
mean_parameters = _parameters.mean_parameters
activation_range = _parameters.activation_range
round_half_away = _parameters.round_half_away
effective_scale = _parameters.effective_scale
quantize_multiplier_below_one = _parameters.quantize_multiplier_below_one
quantize_multiplier_above_one = _parameters.quantize_multiplier_above_one
quantized_bound = _parameters.quantized_bound
ADD_LEFT_SHIFT = _parameters.ADD_LEFT_SHIFT

# ---------------------------------------------------------------------------------------------------------------
# Reference arithmetic (numpy, vectorised; int32 values in int64 arrays)
# ---------------------------------------------------------------------------------------------------------------

def wrap32(values: np.ndarray | int) -> np.ndarray:
    """Two's complement wrap to int32 (what TFLite's int32 overflows do on every target it runs on)."""
    v = np.asarray(values, dtype=np.int64)
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


def _trunc_div(numerator: np.ndarray, power: int) -> np.ndarray:
    """``numerator / 2^power`` rounded toward zero (C's integer division)."""
    magnitude = np.abs(numerator) >> power
    return np.where(numerator < 0, -magnitude, magnitude)


def saturating_rounding_doubling_high_mul(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """``round(a · b / 2^31)``, halves toward +infinity (TFLite's nudge, then truncate); MIN·MIN saturates."""
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    product = a64 * b64  # |a·b| ≤ 2^62: exact in int64
    nudge = np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    result = _trunc_div(product + nudge, 31)
    return np.where((a64 == INT32_MIN) & (b64 == INT32_MIN), INT32_MAX, result)


def rounding_divide_by_pot(x: np.ndarray | int, exponent: np.ndarray | int) -> np.ndarray:
    """``x / 2^exponent`` rounded to nearest, ties away from zero (exponent 0..62)."""
    x64, e = np.asarray(x, np.int64), np.asarray(exponent, np.int64)
    mask = (np.int64(1) << e) - 1
    remainder = x64 & mask
    threshold = (mask >> 1) + (x64 < 0)
    return (x64 >> e) + (remainder > threshold)


def saturating_left_shift(x: np.ndarray | int, exponent: int) -> np.ndarray:
    """gemmlowp's SaturatingRoundingMultiplyByPOT with a positive exponent: ``x · 2^e`` clamped to int32."""
    x64 = np.asarray(x, np.int64)
    threshold = (1 << (31 - exponent)) - 1
    return np.where(x64 > threshold, INT32_MAX, np.where(x64 < -threshold, INT32_MIN, x64 << exponent))


def multiply_by_quantized_multiplier(x: np.ndarray | int, multiplier: np.ndarray | int,
                                     shift: np.ndarray | int) -> np.ndarray:
    """TFLite's double-rounding requantisation: left shift (wrapping), high multiply, rounding right shift."""
    s = np.asarray(shift, np.int64)
    left, right = np.maximum(s, 0), np.maximum(-s, 0)
    shifted = wrap32(np.asarray(x, np.int64) << left)
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right)


def multiply_by_quantized_multiplier_single(x: np.ndarray | int, multiplier: np.ndarray | int,
                                            shift: np.ndarray | int) -> np.ndarray:
    """One rounding of the exact product ``x · m · 2^(shift - 31)``, halves up (shift in [-31, 30]).

    LiteRT's FullyConnected kernels requantise this way (measured: per-tensor
    and per-channel, BUILTIN_REF), its convolutions with the two roundings of
    :func:`multiply_by_quantized_multiplier`.
    """
    total = 31 - np.asarray(shift, np.int64)
    product = np.asarray(x, np.int64) * np.asarray(multiplier, np.int64)  # |x·m| < 2^62
    return wrap32((product + (np.int64(1) << (total - 1))) >> total)  # wraps when a left shift overflows int32


ROUNDINGS = ("double", "single")
"""How a layer's accumulator is requantised: Conv's two roundings or FullyConnected's one."""


def requantize(acc: np.ndarray, multiplier: np.ndarray | int, shift: np.ndarray | int, zero: int,
               low: int, high: int, rounding: str = "double") -> np.ndarray:
    """Conv ("double") / FullyConnected ("single") output: requantise the int32 accumulator, add the zero point,
    clamp."""
    if rounding not in ROUNDINGS:
        raise ValueError(f"unknown rounding {rounding!r}; expected one of {ROUNDINGS}")
    multiply = multiply_by_quantized_multiplier if rounding == "double" else multiply_by_quantized_multiplier_single
    value = wrap32(multiply(wrap32(acc), multiplier, shift) + zero)
    return np.clip(value, low, high)


def add(x1: np.ndarray, zero1: int, x2: np.ndarray, zero2: int, parameters: AddParameters, zero: int,
        low: int, high: int) -> np.ndarray:
    """Add of two quantised tensors (broadcasting as numpy does)."""
    a = (np.asarray(x1, np.int64) - zero1) << parameters.left_shift
    b = (np.asarray(x2, np.int64) - zero2) << parameters.left_shift
    a = multiply_by_quantized_multiplier(a, *parameters.input1)
    b = multiply_by_quantized_multiplier(b, *parameters.input2)
    total = multiply_by_quantized_multiplier(wrap32(a + b), *parameters.output)
    return np.clip(total + zero, low, high)


def mul(x1: np.ndarray, zero1: int, x2: np.ndarray, zero2: int, multiplier: int, shift: int, zero: int,
        low: int, high: int) -> np.ndarray:
    """Mul of two quantised tensors (broadcasting as numpy does)."""
    product = (np.asarray(x1, np.int64) - zero1) * (np.asarray(x2, np.int64) - zero2)
    return np.clip(wrap32(multiply_by_quantized_multiplier(product, multiplier, shift) + zero), low, high)


def rounded_average(total: np.ndarray, count: np.ndarray | int) -> np.ndarray:
    """AveragePool's division: ``total / count`` rounded half away from zero in integers."""
    t, c = np.asarray(total, np.int64), np.asarray(count, np.int64)
    half = c // 2
    return np.where(t > 0, (t + half) // c, -((-t + half) // c))


def average_pool(x: np.ndarray, kernel: tuple[int, int], strides: tuple[int, int],
                 pads: tuple[int, int, int, int], low: int, high: int) -> np.ndarray:
    """AveragePool on NCHW raw values (input and output share scale and zero point): only in-bounds pixels count.

    ``pads`` are (top, left, bottom, right).
    """
    n, c, h, w = x.shape
    top, left, bottom, right = pads
    oh = (h + top + bottom - kernel[0]) // strides[0] + 1
    ow = (w + left + right - kernel[1]) // strides[1] + 1
    out = np.empty((n, c, oh, ow), np.int64)
    for oy in range(oh):
        for ox in range(ow):
            y0, x0 = oy * strides[0] - top, ox * strides[1] - left
            ys = slice(max(y0, 0), min(y0 + kernel[0], h))
            xs = slice(max(x0, 0), min(x0 + kernel[1], w))
            window = np.asarray(x[:, :, ys, xs], np.int64)
            count = window.shape[2] * window.shape[3]
            out[:, :, oy, ox] = rounded_average(window.sum(axis=(2, 3)), count)
    return np.clip(out, low, high)


def mean(x: np.ndarray, axes: tuple[int, ...], zero_in: int, multiplier: int, shift: int, zero: int,
         low: int, high: int) -> np.ndarray:
    """MEAN over ``axes`` (kept as size 1): the sum of ``x - zero_in``, requantised once by ``mean_parameters``."""
    total = (np.asarray(x, np.int64) - zero_in).sum(axis=axes, keepdims=True)
    return np.clip(wrap32(multiply_by_quantized_multiplier(wrap32(total), multiplier, shift) + zero), low, high)


_EXP_BARREL = ((-2, 1672461947), (-1, 1302514674), (0, 790015084), (1, 290630308), (2, 39332535), (3, 720401),
               (4, 242))
"""``(k, round(2^31 · exp(-2^k)))``: exp of each power-of-two part of a Q5.26 magnitude, in Q0.31."""
_EXP_MINUS_ONE_EIGHTH = 1895147668
"""``round(2^31 · exp(-1/8))``: the Taylor expansion's centre value in Q0.31."""
_ONE_THIRD = 715827883
"""``round(2^31 / 3)`` in Q0.31."""
_48_OVER_17, _MINUS_32_OVER_17 = 1515870810, -1010580540
"""Newton-Raphson's starting line for 1/d, d in [0.5, 1): ``48/17 - 32/17 · d`` in Q2.29."""


def _srdhm(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return saturating_rounding_doubling_high_mul(a, b)


def exp_on_negative_values(a: np.ndarray) -> np.ndarray:
    """``exp(a)`` for ``a ≤ 0`` given in Q5.26, as Q0.31 (exp(0) saturates to 2^31 - 1)."""
    a = np.asarray(a, np.int64)
    quarter = 1 << 24  # 1/4 in Q5.26
    # a = (a mod 1/4) - 1/4 - remainder with the offset in [-1/4, 0): a Taylor series there, then one factor
    # exp(-2^k) for each bit of the remainder.
    offset = (a & (quarter - 1)) - quarter
    x = saturating_left_shift(offset, 5) + (1 << 28)  # to Q0.31, centred on -1/8
    x2 = _srdhm(x, x)
    x3 = _srdhm(x2, x)
    x4 = _srdhm(x2, x2)
    x4_over_4 = rounding_divide_by_pot(x4, 2)
    poly = rounding_divide_by_pot(_srdhm(wrap32(x4_over_4 + x3), _ONE_THIRD) + x2, 1)
    result = wrap32(_EXP_MINUS_ONE_EIGHTH + _srdhm(np.full_like(x, _EXP_MINUS_ONE_EIGHTH), wrap32(x + poly)))
    remainder = wrap32(offset - a)
    for k, factor in _EXP_BARREL:
        bit = (remainder >> (26 + k)) & 1
        result = np.where(bit != 0, _srdhm(result, factor), result)
    return np.where(a == 0, INT32_MAX, result)


def one_over_one_plus_x(x: np.ndarray) -> np.ndarray:
    """``1 / (1 + x)`` for x in [0, 1) in Q0.31, by three Newton-Raphson steps on ``d = (1 + x) / 2``."""
    x = np.asarray(x, np.int64)
    total = x + INT32_MAX
    half_denominator = (total + np.where(total >= 0, 1, -1)) // 2  # total ≥ 0 here: rounding half up
    estimate = _48_OVER_17 + _srdhm(half_denominator, _MINUS_32_OVER_17)  # Q2.29
    one_q29 = 1 << 29
    for _ in range(3):
        error = wrap32(one_q29 - _srdhm(half_denominator, estimate))  # Q2.29
        estimate = wrap32(estimate + saturating_left_shift(_srdhm(estimate, error), 2))
    return saturating_left_shift(estimate, 1)  # 1/d = 2/(1+x) in Q2.29 is 1/(1+x) in Q1.30 → Q0.31


def _count_leading_zeros(values: np.ndarray) -> np.ndarray:
    v = np.asarray(values, np.int64) & 0xFFFFFFFF
    return np.array([32 - int(u).bit_length() for u in v.reshape(-1)], np.int64).reshape(v.shape)


def softmax(x: np.ndarray, parameters: SoftmaxParameters, output_dtype: np.dtype) -> np.ndarray:
    """Softmax along the last axis of raw int8/uint8 values; output scale 1/256 at the type's minimum."""
    x = np.asarray(x, np.int64)
    out_info = np.iinfo(output_dtype)
    out_bits = 8 * np.dtype(output_dtype).itemsize
    diff = x - x.max(axis=-1, keepdims=True)
    valid = diff >= parameters.diff_min
    scaled = _srdhm(wrap32(np.where(valid, diff, 0) << parameters.left_shift), parameters.multiplier)
    exps = exp_on_negative_values(scaled)
    terms = np.where(valid, rounding_divide_by_pot(exps, SOFTMAX_ACCUMULATION_INTEGER_BITS), 0)
    total = wrap32(terms.sum(axis=-1, keepdims=True))
    headroom = _count_leading_zeros(total)
    bits_over_unit = SOFTMAX_ACCUMULATION_INTEGER_BITS - headroom
    shifted_minus_one = wrap32(((total & 0xFFFFFFFF) << headroom) - (1 << 31))
    reciprocal = one_over_one_plus_x(shifted_minus_one)
    unsaturated = rounding_divide_by_pot(_srdhm(reciprocal, exps), bits_over_unit + 31 - out_bits)
    result = np.clip(unsaturated + int(out_info.min), int(out_info.min), int(out_info.max))
    return np.where(valid, result, int(out_info.min))
