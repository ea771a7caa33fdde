/*
 * Requantisation of an int32 accumulator in integer arithmetic that rounds exactly as float32 does.
 *
 * Why not a plain fixed-point multiplier: ONNX Runtime's QLinearConv, QLinearMatMul and QGemm compute
 * y = clamp(rint(float(acc) * scale) + zero) with scale = x_scale * w_scale / y_scale in float32.  That value
 * is rounded three times: float(acc) and the product to 24 significant bits, then to an integer (all half
 * to even).  A fixed-point multiplier rounds the exact product once, so wherever the product lies within a
 * float32 rounding error of a half step the two disagree by one step, and a step of difference in one layer
 * grows through the layers after it (SqueezeNet's intermediate tensors drifted by five steps).  These
 * functions perform the same three roundings on integers, so the layer equals ONNX Runtime's bit for bit
 * given the same inputs, with no floating-point unit.
 *
 * scale = significand * 2^-shift with significand in [2^23, 2^24) (the float32 significand, exact), shift
 * in [1, 62].  All magnitudes stay below 2^56: |acc| <= 2^31, significand < 2^24.
 */
#ifndef DCG_REQUANTIZE_H
#define DCG_REQUANTIZE_H

#include <stdint.h>

#if defined(__GNUC__)
#define DCG_REQUANTIZE_INLINE static inline __attribute__((always_inline))
#else
#define DCG_REQUANTIZE_INLINE static inline
#endif

/* Number of significant bits of v (0 for 0). */
DCG_REQUANTIZE_INLINE int32_t dcg_bit_length(uint64_t v) {
#if defined(__GNUC__)
    return v ? 64 - __builtin_clzll(v) : 0;
#else
    int32_t n = 0;
    while (v) {
        v >>= 1;
        ++n;
    }
    return n;
#endif
}

/* v / 2^s rounded half to even (s in [1, 63]). */
DCG_REQUANTIZE_INLINE uint64_t dcg_shift_round_even(uint64_t v, int32_t s) {
    const uint64_t half = (uint64_t)1 << (s - 1);
    const uint64_t q = v >> s, r = v - (q << s);
    return q + (r > half || (r == half && (q & 1u)));
}

/* v rounded half to even to 24 significant bits, the precision of a float32 (v < 2^63). */
DCG_REQUANTIZE_INLINE uint64_t dcg_round_to_float32(uint64_t v) {
    const int32_t drop = dcg_bit_length(v) - 24;
    return drop > 0 ? dcg_shift_round_even(v, drop) << drop : v;
}

/* clamp(rint(float(acc) * scale) + zero, low, high), scale = significand * 2^-shift, in integers only.
 * Rounding is symmetric about zero at every step, so the magnitude is rounded and the sign put back. */
DCG_REQUANTIZE_INLINE int32_t dcg_requantize_float32(int32_t acc, int32_t significand, int32_t shift, int32_t zero,
                                                   int32_t low, int32_t high) {
    const uint64_t magnitude = acc < 0 ? (uint64_t)0 - (uint64_t)(int64_t)acc : (uint64_t)acc;
    const uint64_t product = dcg_round_to_float32(dcg_round_to_float32(magnitude) * (uint64_t)significand);
    const int64_t rounded = (int64_t)dcg_shift_round_even(product, shift);
    const int64_t y = (acc < 0 ? -rounded : rounded) + zero;
    return (int32_t)(y < low ? low : (y > high ? high : y));
}

#endif /* DCG_REQUANTIZE_H */
