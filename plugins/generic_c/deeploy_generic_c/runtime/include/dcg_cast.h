/* Element type conversions for Cast and CastLike, every one defined for every input value.
 *
 * C99 leaves a float -> integer conversion out of range undefined, and a double -> float one too, and has no
 * half-precision type at all.  These functions give each conversion one defined result:
 *   - float -> integer truncates toward zero, saturates out of range (to the type's minimum or maximum)
 *     and maps NaN to 0;
 *   - integer -> narrower signed integer wraps modulo 2^width (as numpy's astype and ONNX Runtime do);
 *   - float16 is carried as its IEEE bit pattern in uint16_t; conversions to it round to nearest, ties to
 *     even, produce subnormals, overflow to infinity and keep NaN (quiet) and the sign.
 * Every conversion from a float type goes through double, which holds float and float16 exactly.
 */
#ifndef DCG_CAST_H
#define DCG_CAST_H

#include <float.h>
#include <stdint.h>
#include <string.h>

/* A small IEEE float (``mant_bits`` fraction bits, ``exp_bits`` exponent bits) as a double (exact). */
static inline double dcg_small_float_to_f64(uint32_t bits, int mant_bits, int exp_bits) {
    const uint64_t sign = (uint64_t)((bits >> (mant_bits + exp_bits)) & 1u) << 63;
    const int32_t bias = (int32_t)((1u << (exp_bits - 1)) - 1u);
    const uint32_t all_ones = (1u << exp_bits) - 1u;
    const uint32_t exponent = (bits >> mant_bits) & all_ones;
    uint64_t mantissa = bits & ((1u << mant_bits) - 1u);
    uint64_t out;
    double value;
    if (exponent == all_ones) {
        out = sign | ((uint64_t)0x7ffu << 52) | (mantissa << (52 - mant_bits));
    } else if (exponent == 0u && mantissa == 0u) {
        out = sign;
    } else {
        int32_t unbiased = (int32_t)exponent - bias;
        if (exponent == 0u) { /* subnormal: normalise, the double has the range for it */
            unbiased = 1 - bias;
            while ((mantissa & ((uint64_t)1u << mant_bits)) == 0u) {
                mantissa <<= 1;
                unbiased -= 1;
            }
            mantissa &= ((uint64_t)1u << mant_bits) - 1u;
        }
        out = sign | ((uint64_t)(unbiased + 1023) << 52) | (mantissa << (52 - mant_bits));
    }
    memcpy(&value, &out, sizeof value);
    return value;
}

/* ``x`` rounded to nearest (ties to even) into a small IEEE float's bit pattern (see dcg_small_float_to_f64). */
static inline uint32_t dcg_f64_to_small_float(double x, int mant_bits, int exp_bits) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    {
        const uint32_t sign = (uint32_t)(bits >> 63) << (mant_bits + exp_bits);
        const uint32_t exponent = (uint32_t)(bits >> 52) & 0x7ffu;
        const uint64_t fraction = bits & (((uint64_t)1u << 52) - 1u);
        const int32_t bias = (int32_t)((1u << (exp_bits - 1)) - 1u);
        const uint32_t infinity = sign | (((1u << exp_bits) - 1u) << mant_bits);
        int32_t unbiased = (int32_t)exponent - 1023;
        uint64_t significand = fraction | ((uint64_t)1u << 52);
        int shift;
        uint64_t kept, rest, half;
        if (exponent == 0x7ffu) {
            if (fraction == 0u) return infinity;
            return infinity | (1u << (mant_bits - 1)) | (uint32_t)(fraction >> (52 - mant_bits));
        }
        if (exponent == 0u) return sign; /* a double subnormal is far below every small float's range */
        if (unbiased > bias) return infinity;
        /* normal results keep mant_bits fraction bits; subnormal ones count units of 2^(1 - bias - mant_bits) */
        shift = unbiased >= 1 - bias ? 52 - mant_bits : 52 - mant_bits + (1 - bias - unbiased);
        if (shift >= 64) return sign;
        kept = significand >> shift;
        rest = significand & (((uint64_t)1u << shift) - 1u);
        half = (uint64_t)1u << (shift - 1);
        if (rest > half || (rest == half && (kept & 1u) != 0u)) kept += 1u;
        if (unbiased < 1 - bias) return sign | (uint32_t)kept; /* a carry into bit mant_bits is the least normal */
        if (kept == ((uint64_t)1u << (mant_bits + 1))) {
            kept >>= 1;
            unbiased += 1;
            if (unbiased > bias) return infinity;
        }
        return sign | ((uint32_t)(unbiased + bias) << mant_bits) | ((uint32_t)kept & ((1u << mant_bits) - 1u));
    }
}

static inline double dcg_f16_to_f64(uint16_t bits) { return dcg_small_float_to_f64(bits, 10, 5); }
static inline uint16_t dcg_f64_to_f16(double x) { return (uint16_t)dcg_f64_to_small_float(x, 10, 5); }

/* double -> float rounded to nearest even; out of float's range it is infinity (never C's undefined case). */
static inline float dcg_f64_to_f32(double x) {
    float value;
    uint32_t bits;
    if (x >= -(double)FLT_MAX && x <= (double)FLT_MAX) return (float)x;
    bits = dcg_f64_to_small_float(x, 23, 8);
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* float -> integer: truncation toward zero, saturation out of range, NaN -> 0.  The bounds are exact doubles:
 * ``low`` the type's minimum, ``above`` 2^(bits - signed) (the first value past the maximum). */
#define DCG_FLOAT_TO_INT(name, type, low, above, maximum)                                                     \
    static inline type name(double x) {                                                                        \
        if (x != x) return (type)0;                                                                            \
        if (x <= (double)(low)) return (type)(low);                                                            \
        if (x >= (above)) return (type)(maximum);                                                              \
        return (type)x;                                                                                        \
    }
DCG_FLOAT_TO_INT(dcg_f64_to_i8, int8_t, INT8_MIN, 128.0, INT8_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_i16, int16_t, INT16_MIN, 32768.0, INT16_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_i32, int32_t, INT32_MIN, 2147483648.0, INT32_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_i64, int64_t, INT64_MIN, 9223372036854775808.0, INT64_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_u8, uint8_t, 0, 256.0, UINT8_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_u16, uint16_t, 0, 65536.0, UINT16_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_u32, uint32_t, 0, 4294967296.0, UINT32_MAX)
DCG_FLOAT_TO_INT(dcg_f64_to_u64, uint64_t, 0, 18446744073709551616.0, UINT64_MAX)
#undef DCG_FLOAT_TO_INT

/* An integer's low ``bits`` bits (given as the value modulo 2^64) as a signed integer of that width, without
 * C's implementation-defined conversion of an out-of-range value to a signed type. */
#define DCG_WRAP_SIGNED(name, type, unsigned_type, minimum)                                                    \
    static inline type name(uint64_t value) {                                                                  \
        const unsigned_type low = (unsigned_type)value;                                                        \
        const unsigned_type top = (unsigned_type)((unsigned_type)1u << (sizeof(type) * 8u - 1u));             \
        if (low < top) return (type)low;                                                                       \
        return (type)((type)(low - top) + (minimum));                                                         \
    }
DCG_WRAP_SIGNED(dcg_wrap_i8, int8_t, uint8_t, INT8_MIN)
DCG_WRAP_SIGNED(dcg_wrap_i16, int16_t, uint16_t, INT16_MIN)
DCG_WRAP_SIGNED(dcg_wrap_i32, int32_t, uint32_t, INT32_MIN)
DCG_WRAP_SIGNED(dcg_wrap_i64, int64_t, uint64_t, INT64_MIN)
#undef DCG_WRAP_SIGNED

#endif /* DCG_CAST_H */
