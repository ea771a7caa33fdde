/*
 * Element-wise binary float32 kernels: add, sub, mul, div, pow, max, min.
 *
 * Each operator comes in four shapes (same shape, tensor-scalar, scalar-tensor, general broadcast) so the
 * common cases are tight single loops the compiler vectorises; the general case walks the broadcast output
 * with an odometer over at most DCG_MAX_DIMS dimensions and runs the innermost dimension as a strided loop.
 */
#include <math.h>

#include "dcg_kernels.h"

#define DCG_OP_add(a, b) ((a) + (b))
#define DCG_OP_sub(a, b) ((a) - (b))
#define DCG_OP_mul(a, b) ((a) * (b))
#define DCG_OP_div(a, b) ((a) / (b))
#define DCG_OP_pow(a, b) powf((a), (b))
#define DCG_OP_max(a, b) fmaxf((a), (b))
#define DCG_OP_min(a, b) fminf((a), (b))

#define DCG_DEFINE_BINARY(op)                                                                            \
    void dcg_##op##_f32(const float *restrict A, const float *restrict B, float *restrict Y,             \
                        int32_t size) {                                                                  \
        for (int32_t i = 0; i < size; ++i) Y[i] = DCG_OP_##op(A[i], B[i]);                              \
    }                                                                                                    \
    void dcg_##op##_scalar_f32(const float *restrict A, const float *restrict B, float *restrict Y,      \
                               int32_t size) {                                                           \
        const float b = B[0];                                                                            \
        for (int32_t i = 0; i < size; ++i) Y[i] = DCG_OP_##op(A[i], b);                                 \
    }                                                                                                    \
    void dcg_##op##_rscalar_f32(const float *restrict A, const float *restrict B, float *restrict Y,     \
                                int32_t size) {                                                          \
        const float a = A[0];                                                                            \
        for (int32_t i = 0; i < size; ++i) Y[i] = DCG_OP_##op(a, B[i]);                                 \
    }                                                                                                    \
    void dcg_##op##_bcast_f32(const float *restrict A, const float *restrict B, float *restrict Y,       \
                              int32_t ndim, const int32_t *out_shape, const int32_t *a_strides,          \
                              const int32_t *b_strides) {                                                \
        int32_t index[DCG_MAX_DIMS] = {0};                                                               \
        const int32_t inner = ndim > 0 ? out_shape[ndim - 1] : 1;                                        \
        const int32_t sa = ndim > 0 ? a_strides[ndim - 1] : 0, sb = ndim > 0 ? b_strides[ndim - 1] : 0; \
        int32_t outer = 1;                                                                               \
        for (int32_t d = 0; d + 1 < ndim; ++d) outer *= out_shape[d];                                    \
        int32_t offset_a = 0, offset_b = 0;                                                              \
        for (int32_t o = 0; o < outer; ++o) {                                                            \
            const float *pa = A + offset_a;                                                              \
            const float *pb = B + offset_b;                                                              \
            float *py = Y + (int64_t)o * inner;                                                          \
            for (int32_t i = 0; i < inner; ++i) py[i] = DCG_OP_##op(pa[i * sa], pb[i * sb]);            \
            for (int32_t d = ndim - 2; d >= 0; --d) {                                                    \
                ++index[d];                                                                              \
                offset_a += a_strides[d];                                                                \
                offset_b += b_strides[d];                                                                \
                if (index[d] < out_shape[d]) break;                                                      \
                offset_a -= a_strides[d] * out_shape[d];                                                 \
                offset_b -= b_strides[d] * out_shape[d];                                                 \
                index[d] = 0;                                                                            \
            }                                                                                            \
        }                                                                                                \
    }

DCG_DEFINE_BINARY(add)
DCG_DEFINE_BINARY(sub)
DCG_DEFINE_BINARY(mul)
DCG_DEFINE_BINARY(div)
DCG_DEFINE_BINARY(pow)
DCG_DEFINE_BINARY(max)
DCG_DEFINE_BINARY(min)
