"""TFLite's integer requantisation, for tables the compiler computes ahead of time.

TFLite turns a real multiplier into a 31-bit significand and a power-of-two
exponent (``frexp``, the significand rounded half away from zero), then
multiplies with a rounding doubling high multiply and a rounding right shift:
two roundings, not one.  A table built with any other rounding could sit one
step from LiteRT's result, so the compiler reproduces both steps exactly.
"""

from __future__ import annotations

import math

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def quantize_multiplier(real: float) -> tuple[int, int]:
    """(significand in [2^30, 2^31), exponent) with ``real ≈ significand · 2^(exponent - 31)``; (0, 0) for 0."""
    if real == 0.0:
        return 0, 0
    fraction, exponent = math.frexp(real)
    significand = math.floor(abs(fraction) * 2**31 + 0.5) * (1 if fraction >= 0 else -1)
    if significand == 2**31:
        significand //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    return significand, exponent


def _rounding_doubling_high_multiply(a: int, b: int) -> int:
    """High 32 bits of ``2·a·b`` rounded to nearest (ties away from zero), saturated for INT32_MIN²."""
    if a == b == INT32_MIN:
        return INT32_MAX
    product = a * b
    nudge = (1 << 30) if product >= 0 else 1 - (1 << 30)
    total = product + nudge
    quotient = abs(total) >> 31  # C's division truncates toward zero
    return quotient if total >= 0 else -quotient


def _rounding_divide_by_power_of_two(x: int, exponent: int) -> int:
    """``x / 2^exponent`` rounded to nearest, ties away from zero."""
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def multiply_by_quantized_multiplier(x: int, significand: int, exponent: int) -> int:
    """TFLite's ``x · significand · 2^(exponent - 31)`` with its two roundings (x an int32)."""
    left, right = max(exponent, 0), max(-exponent, 0)
    shifted = x * (1 << left)
    shifted = max(INT32_MIN, min(INT32_MAX, shifted))
    return _rounding_divide_by_power_of_two(_rounding_doubling_high_multiply(shifted, significand), right)
