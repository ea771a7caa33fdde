/*
 * TFLite's integer arithmetic, so that `--quantization fixed-point` reproduces LiteRT's reference int8 kernels
 * bit for bit.
 *
 * Why a header of its own: TFLite requantises with a 31-bit multiplier in two roundings (a doubling high
 * multiply rounding halves up, then a shift rounding halves away from zero), adds with 20 bits of headroom
 * and computes softmax in gemmlowp-style fixed point (Q5.26 differences, a polynomial and barrel-shifted exp, a
 * Newton-Raphson reciprocal).  Any other rounding moves outputs by a step.  The parameters (multipliers,
 * shifts, softmax radius) are derived at compile time by deeploy_generic_c/ops/tflite_arithmetic.py.
 *
 * Portability: TFLite's C++ lets int32 products and sums wrap and shifts negative numbers right.  These
 * functions are plain C99 with no undefined or implementation-defined behaviour for any argument the
 * kernels pass: 64-bit products, wrap-around through uint32_t, floor shifts written on non-negative values.
 *
 * Fixed-point notation: Qi.f is a signed 32-bit raw value with i integer and f fractional bits (i + f = 31).
 */
#ifndef DCG_TFLITE_H
#define DCG_TFLITE_H

#include <stdint.h>

#if defined(__GNUC__)
#define DCG_TFLITE_INLINE static inline __attribute__((always_inline))
#else
#define DCG_TFLITE_INLINE static inline
#endif

/* The int32 whose two's complement bit pattern is u (no implementation-defined conversion). */
DCG_TFLITE_INLINE int32_t dcg_tfl_from_bits(uint32_t u) {
    return u < 0x80000000u ? (int32_t)u : (int32_t)(u - 0x80000000u) + INT32_MIN;
}

/* a + b wrapped to 32 bits, as TFLite's int32 additions behave. */
DCG_TFLITE_INLINE int32_t dcg_tfl_add_wrap(int32_t a, int32_t b) {
    return dcg_tfl_from_bits((uint32_t)a + (uint32_t)b);
}

/* x * 2^shift wrapped to 32 bits (shift in [0, 31]), as TFLite's `x * (1 << shift)`. */
DCG_TFLITE_INLINE int32_t dcg_tfl_shift_left_wrap(int32_t x, int32_t shift) {
    return dcg_tfl_from_bits((uint32_t)x << shift);
}

/* floor(x / 2^shift) for shift in [0, 31], without shifting a negative number: for x < 0, ~x = -x - 1 >= 0. */
DCG_TFLITE_INLINE int32_t dcg_tfl_floor_shift(int32_t x, int32_t shift) {
    return x >= 0 ? x >> shift : ~((~x) >> shift);
}

/* round(a * b / 2^31) with halves toward +infinity (a nudge of one half away from zero, then truncation toward
 * zero); the one overflowing case (INT32_MIN squared) saturates. */
DCG_TFLITE_INLINE int32_t dcg_tfl_high_mul(int32_t a, int32_t b) {
    const int64_t product = (int64_t)a * (int64_t)b;
    const int64_t nudge = product >= 0 ? ((int64_t)1 << 30) : 1 - ((int64_t)1 << 30);
    if (a == INT32_MIN && b == INT32_MIN) return INT32_MAX;
    return (int32_t)((product + nudge) / ((int64_t)1 << 31)); /* C division truncates toward zero */
}

/* round(x / 2^exponent), ties away from zero, exponent in [0, 62] (beyond 31 the result is 0 or -1). */
DCG_TFLITE_INLINE int32_t dcg_tfl_rounding_shift(int32_t x, int32_t exponent) {
    if (exponent > 31) return (exponent == 32 && x == INT32_MIN) ? -1 : 0;
    {
        const int32_t mask = (int32_t)(((uint32_t)1 << exponent) - 1u);
        const int32_t remainder = x & mask; /* x - floor(x / 2^e) * 2^e: int32_t is two's complement */
        const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
        return dcg_tfl_floor_shift(x, exponent) + (remainder > threshold ? 1 : 0);
    }
}

/* x * multiplier * 2^(shift - 31): shift left (shift > 0, wrapping), high multiply, rounding shift right. */
DCG_TFLITE_INLINE int32_t dcg_tfl_multiply(int32_t x, int32_t multiplier, int32_t shift) {
    const int32_t left = shift > 0 ? shift : 0;
    const int32_t right = shift > 0 ? 0 : -shift;
    return dcg_tfl_rounding_shift(dcg_tfl_high_mul(dcg_tfl_shift_left_wrap(x, left), multiplier), right);
}

/* Conv / FullyConnected output: requantise the accumulator, add the zero point (wrapping) and clamp. */
DCG_TFLITE_INLINE int32_t dcg_tfl_requantize(int32_t acc, int32_t multiplier, int32_t shift, int32_t zero,
                                             int32_t low, int32_t high) {
    const int32_t value = dcg_tfl_add_wrap(dcg_tfl_multiply(acc, multiplier, shift), zero);
    return value < low ? low : (value > high ? high : value);
}

/* x * multiplier * 2^(shift - 31) rounded once, halves up (shift in [-31, 30]): the exact 64-bit product plus
 * half of the divisor, floor-shifted.  LiteRT's FullyConnected kernels requantise this way (its convolutions
 * round twice, dcg_tfl_multiply).  |x * multiplier| < 2^62, so the sum cannot overflow; for shift <= 0 the
 * result always fits in int32. */
DCG_TFLITE_INLINE int32_t dcg_tfl_multiply_single(int32_t x, int32_t multiplier, int32_t shift) {
    const int32_t total = 31 - shift;
    const int64_t sum = (int64_t)x * (int64_t)multiplier + ((int64_t)1 << (total - 1));
    const int64_t floor = sum >= 0 ? sum >> total : ~((~sum) >> total); /* without shifting a negative value */
    return dcg_tfl_from_bits((uint32_t)floor); /* wraps like TFLite's cast when a left shift overflows int32 */
}

/* FullyConnected output: requantise with one rounding, add the zero point (wrapping) and clamp. */
DCG_TFLITE_INLINE int32_t dcg_tfl_requantize_single(int32_t acc, int32_t multiplier, int32_t shift, int32_t zero,
                                                    int32_t low, int32_t high) {
    const int32_t value = dcg_tfl_add_wrap(dcg_tfl_multiply_single(acc, multiplier, shift), zero);
    return value < low ? low : (value > high ? high : value);
}

/* x * 2^exponent clamped to int32 (exponent in [1, 30]): gemmlowp's saturating multiply by a power of two. */
DCG_TFLITE_INLINE int32_t dcg_tfl_saturating_shift_left(int32_t x, int32_t exponent) {
    const int32_t threshold = (int32_t)(((uint32_t)1 << (31 - exponent)) - 1u);
    if (x > threshold) return INT32_MAX;
    if (x < -threshold) return INT32_MIN;
    return dcg_tfl_shift_left_wrap(x, exponent); /* exact: |x| * 2^e < 2^31 */
}

/* exp(a) for a <= 0 given in Q5.26 (a >= -32), as Q0.31; exp(0) is the largest Q0.31 value.
 *
 * a is split into r in [-1/4, 0) plus -(a sum of powers of two from 1/4 to 16): exp(r) comes from a Taylor
 * polynomial around -1/8 and each power of two present multiplies in its exp(-2^k), a Q0.31 constant equal
 * to round(2^31 * exp(-2^k)). */
DCG_TFLITE_INLINE int32_t dcg_tfl_exp_on_negative_values(int32_t a) {
    static const int32_t factor[7] = {1672461947, 1302514674, 790015084, 290630308, 39332535, 720401, 242};
    const int32_t quarter = (int32_t)1 << 24; /* 1/4 in Q5.26 */
    const int32_t offset = (a & (quarter - 1)) - quarter; /* in [-1/4, 0) */
    const int32_t exp_minus_eighth = 1895147668;            /* round(2^31 * exp(-1/8)) */
    const int32_t one_third = 715827883;                    /* round(2^31 / 3) */
    /* Q0.31 value of offset + 1/8, in [-1/8, 1/8) */
    const int32_t x = dcg_tfl_saturating_shift_left(offset, 5) + ((int32_t)1 << 28);
    const int32_t x2 = dcg_tfl_high_mul(x, x);
    const int32_t x3 = dcg_tfl_high_mul(x2, x);
    const int32_t x4 = dcg_tfl_high_mul(x2, x2);
    /* x^2/2 + x^3/6 + x^4/24 = ((x^4/4 + x^3) / 3 + x^2) / 2 */
    const int32_t series = dcg_tfl_rounding_shift(
        dcg_tfl_high_mul(dcg_tfl_rounding_shift(x4, 2) + x3, one_third) + x2, 1);
    int32_t result = dcg_tfl_add_wrap(exp_minus_eighth, dcg_tfl_high_mul(exp_minus_eighth, x + series));
    const int32_t remainder = offset - a; /* >= 0: the whole quarters of -a, in Q5.26 */
    int32_t k;
    for (k = 0; k < 7; ++k) {
        if (remainder & ((int32_t)1 << (24 + k))) result = dcg_tfl_high_mul(result, factor[k]);
    }
    return a == 0 ? INT32_MAX : result;
}

/* 1 / (1 + x) for x in [0, 1) given in Q0.31, as Q0.31: three Newton-Raphson steps on d = (1 + x) / 2 in
 * [1/2, 1), starting from the line 48/17 - 32/17 * d (Q2.29 constants). */
DCG_TFLITE_INLINE int32_t dcg_tfl_one_over_one_plus_x(int32_t x) {
    const int32_t half_denominator = (int32_t)(((int64_t)x + INT32_MAX + 1) / 2); /* (1 + x) / 2, halves up */
    const int32_t one = (int32_t)1 << 29;                                       /* 1 in Q2.29 */
    int32_t estimate = 1515870810 + dcg_tfl_high_mul(half_denominator, -1010580540);
    int32_t step;
    for (step = 0; step < 3; ++step) {
        const int32_t error = one - dcg_tfl_high_mul(half_denominator, estimate);
        estimate = dcg_tfl_add_wrap(estimate, dcg_tfl_saturating_shift_left(dcg_tfl_high_mul(estimate, error), 2));
    }
    return dcg_tfl_saturating_shift_left(estimate, 1); /* 1/d in Q2.29 is 1/(1+x) in Q1.30; to Q0.31 */
}

/* Number of leading zero bits of a non-zero 32-bit value. */
DCG_TFLITE_INLINE int32_t dcg_tfl_leading_zeros(uint32_t v) {
#if defined(__GNUC__)
    return (int32_t)__builtin_clz(v);
#else
    int32_t n = 0;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        ++n;
    }
    return n;
#endif
}

/* Softmax's scaled difference: (x - max) in Q5.26 given multiplier and left shift (the difference is at
 * least diff_min, so the shifted value fits in int32). */
DCG_TFLITE_INLINE int32_t dcg_tfl_softmax_exp(int32_t difference, int32_t multiplier, int32_t left_shift) {
    return dcg_tfl_exp_on_negative_values(
        dcg_tfl_high_mul(dcg_tfl_shift_left_wrap(difference, left_shift), multiplier));
}

/* One term of softmax's Q12.19 sum: a Q0.31 exponential rescaled to 12 integer bits. */
DCG_TFLITE_INLINE int32_t dcg_tfl_softmax_term(int32_t exponential) {
    return dcg_tfl_rounding_shift(exponential, 12);
}

/* The reciprocal of a Q12.19 sum (> 0) as (Q0.31 value, bits over unit): 1/sum = value * 2^-bits_over_unit. */
DCG_TFLITE_INLINE int32_t dcg_tfl_softmax_reciprocal(int32_t sum, int32_t *bits_over_unit) {
    const int32_t headroom = dcg_tfl_leading_zeros((uint32_t)sum);
    const uint32_t shifted = (uint32_t)sum << headroom; /* in [2^31, 2^32): 1 + x with x in [0, 1) */
    *bits_over_unit = 12 - headroom;
    return dcg_tfl_one_over_one_plus_x((int32_t)(shifted - 0x80000000u));
}

/* The output for one exponential: round(exp * reciprocal / 2^(bits_over_unit + 31 - output_bits)) plus the
 * output type's minimum (the zero point of scale 1/2^output_bits), clamped to [low, high]. */
DCG_TFLITE_INLINE int32_t dcg_tfl_softmax_output(int32_t exponential, int32_t reciprocal, int32_t bits_over_unit,
                                                 int32_t output_bits, int32_t type_min, int32_t low,
                                                 int32_t high) {
    const int32_t value = dcg_tfl_rounding_shift(dcg_tfl_high_mul(reciprocal, exponential),
                                                 bits_over_unit + 31 - output_bits) + type_min;
    return value < low ? low : (value > high ? high : value);
}

#endif /* DCG_TFLITE_H */
