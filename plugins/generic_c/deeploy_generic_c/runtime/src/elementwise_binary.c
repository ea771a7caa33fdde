/*
 * Element-wise binary float32 kernels: add, sub, mul, div, pow, max, min, each in four variants
 * (same shape, tensor-scalar, scalar-tensor, general broadcast).
 *
 * Why it is written this way
 *  - One macro instantiates the whole family for an operator, so the 28 entry points share a single
 *    definition of the loops.  The only per-operator piece is the expression DCG_OP_<op>(a, b).
 *  - Every variant funnels into binary_row_<op>(), which handles one contiguous run of outputs with
 *    operand strides in {1, 0, anything}.  Its fast loops are written as blocks of DCG_VB iterations
 *    with a constant trip count: GCC vectorises those even at -O2 (its -O2 cost model refuses loops
 *    that would need a scalar epilogue), and other compilers treat them as ordinary loops.
 *  - max/min are written with comparisons that have fmaxf/fminf semantics (a NaN operand yields the
 *    other operand) because a plain fmaxf call blocks vectorisation.
 *  - The broadcast variant first simplifies the iteration space: size-1 dimensions are dropped and
 *    adjacent dimensions that are contiguous for both operands are merged.  Typical broadcasts (bias
 *    over channels, scalar-per-row, ...) then become a short odometer over the outer dimensions with a
 *    long contiguous (or stride-0) innermost run.
 */
#include <math.h>
#include <stddef.h>

#include "dcg_kernels.h"

#define DCG_VB 16 /* block length of the vectorisable loops */

#define DCG_OP_add(a, b) ((a) + (b))
#define DCG_OP_sub(a, b) ((a) - (b))
#define DCG_OP_mul(a, b) ((a) * (b))
#define DCG_OP_div(a, b) ((a) / (b))
#define DCG_OP_pow(a, b) powf((a), (b))
#define DCG_OP_max(a, b) (((a) >= (b) || (b) != (b)) ? (a) : (b))
#define DCG_OP_min(a, b) (((a) <= (b) || (b) != (b)) ? (a) : (b))

/* Simplified broadcast iteration space (output shape and per-operand element strides). */
typedef struct {
    int32_t ndim;
    int32_t shape[DCG_MAX_DIMS];
    ptrdiff_t a_stride[DCG_MAX_DIMS];
    ptrdiff_t b_stride[DCG_MAX_DIMS];
} bcast_space;

static void bcast_simplify(bcast_space *s, int32_t ndim, const int32_t *out_shape, const int32_t *a_strides,
                           const int32_t *b_strides)
{
    /* Walk from the innermost dimension outwards, building the simplified space back to front. */
    int32_t n = 0;
    int32_t shape[DCG_MAX_DIMS];
    ptrdiff_t as[DCG_MAX_DIMS], bs[DCG_MAX_DIMS];
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (out_shape[d] == 1) {
            continue;
        }
        if (n > 0 && a_strides[d] == as[n - 1] * shape[n - 1] && b_strides[d] == bs[n - 1] * shape[n - 1]) {
            shape[n - 1] *= out_shape[d];
            continue;
        }
        shape[n] = out_shape[d];
        as[n] = a_strides[d];
        bs[n] = b_strides[d];
        ++n;
    }
    if (n == 0) {
        shape[0] = 1;
        as[0] = 0;
        bs[0] = 0;
        n = 1;
    }
    s->ndim = n;
    for (int32_t i = 0; i < n; ++i) {
        s->shape[i] = shape[n - 1 - i];
        s->a_stride[i] = as[n - 1 - i];
        s->b_stride[i] = bs[n - 1 - i];
    }
}

#define DCG_DEFINE_BINARY(op)                                                                            \
    /* Y[0..n) = A[i*sa] op B[i*sb] */                                                                    \
    static void binary_row_##op(const float *restrict A, ptrdiff_t sa, const float *restrict B,          \
                                ptrdiff_t sb, float *restrict Y, int32_t n)                              \
    {                                                                                                     \
        int32_t i = 0;                                                                                    \
        if (sa == 1 && sb == 1) {                                                                         \
            for (; i + DCG_VB <= n; i += DCG_VB) {                                                        \
                for (int32_t t = 0; t < DCG_VB; ++t) {                                                    \
                    const float a = A[i + t], b = B[i + t];                                               \
                    Y[i + t] = DCG_OP_##op(a, b);                                                         \
                }                                                                                         \
            }                                                                                             \
            for (; i < n; ++i) {                                                                          \
                const float a = A[i], b = B[i];                                                           \
                Y[i] = DCG_OP_##op(a, b);                                                                 \
            }                                                                                             \
        } else if (sa == 1 && sb == 0) {                                                                  \
            const float b = B[0];                                                                         \
            for (; i + DCG_VB <= n; i += DCG_VB) {                                                        \
                for (int32_t t = 0; t < DCG_VB; ++t) {                                                    \
                    const float a = A[i + t];                                                             \
                    Y[i + t] = DCG_OP_##op(a, b);                                                         \
                }                                                                                         \
            }                                                                                             \
            for (; i < n; ++i) {                                                                          \
                const float a = A[i];                                                                     \
                Y[i] = DCG_OP_##op(a, b);                                                                 \
            }                                                                                             \
        } else if (sa == 0 && sb == 1) {                                                                  \
            const float a = A[0];                                                                         \
            for (; i + DCG_VB <= n; i += DCG_VB) {                                                        \
                for (int32_t t = 0; t < DCG_VB; ++t) {                                                    \
                    const float b = B[i + t];                                                             \
                    Y[i + t] = DCG_OP_##op(a, b);                                                         \
                }                                                                                         \
            }                                                                                             \
            for (; i < n; ++i) {                                                                          \
                const float b = B[i];                                                                     \
                Y[i] = DCG_OP_##op(a, b);                                                                 \
            }                                                                                             \
        } else {                                                                                          \
            for (; i < n; ++i) {                                                                          \
                const float a = A[i * sa], b = B[i * sb];                                                 \
                Y[i] = DCG_OP_##op(a, b);                                                                 \
            }                                                                                             \
        }                                                                                                 \
    }                                                                                                     \
                                                                                                          \
    void dcg_##op##_f32(const float *restrict A, const float *restrict B, float *restrict Y, int32_t size) \
    {                                                                                                     \
        binary_row_##op(A, 1, B, 1, Y, size);                                                             \
    }                                                                                                     \
                                                                                                          \
    void dcg_##op##_scalar_f32(const float *restrict A, const float *restrict B, float *restrict Y,       \
                               int32_t size)                                                              \
    {                                                                                                     \
        binary_row_##op(A, 1, B, 0, Y, size);                                                             \
    }                                                                                                     \
                                                                                                          \
    void dcg_##op##_rscalar_f32(const float *restrict A, const float *restrict B, float *restrict Y,      \
                                int32_t size)                                                             \
    {                                                                                                     \
        binary_row_##op(A, 0, B, 1, Y, size);                                                             \
    }                                                                                                     \
                                                                                                          \
    void dcg_##op##_bcast_f32(const float *restrict A, const float *restrict B, float *restrict Y,        \
                              int32_t ndim, const int32_t *out_shape, const int32_t *a_strides,           \
                              const int32_t *b_strides)                                                   \
    {                                                                                                     \
        bcast_space s;                                                                                    \
        int32_t idx[DCG_MAX_DIMS] = {0};                                                                  \
        bcast_simplify(&s, ndim, out_shape, a_strides, b_strides);                                        \
        const int32_t last = s.ndim - 1, n = s.shape[last];                                               \
        int32_t rows = 1;                                                                                 \
        for (int32_t d = 0; d < last; ++d) {                                                              \
            rows *= s.shape[d];                                                                           \
        }                                                                                                 \
        ptrdiff_t a_off = 0, b_off = 0;                                                                   \
        for (int32_t r = 0; r < rows; ++r) {                                                              \
            binary_row_##op(A + a_off, s.a_stride[last], B + b_off, s.b_stride[last],                     \
                            Y + (ptrdiff_t)r * n, n);                                                     \
            for (int32_t d = last - 1; d >= 0; --d) {                                                     \
                a_off += s.a_stride[d];                                                                   \
                b_off += s.b_stride[d];                                                                   \
                if (++idx[d] < s.shape[d]) {                                                              \
                    break;                                                                                \
                }                                                                                         \
                a_off -= s.a_stride[d] * s.shape[d];                                                      \
                b_off -= s.b_stride[d] * s.shape[d];                                                      \
                idx[d] = 0;                                                                               \
            }                                                                                             \
        }                                                                                                 \
    }

DCG_DEFINE_BINARY(add)
DCG_DEFINE_BINARY(sub)
DCG_DEFINE_BINARY(mul)
DCG_DEFINE_BINARY(div)
DCG_DEFINE_BINARY(pow)
DCG_DEFINE_BINARY(max)
DCG_DEFINE_BINARY(min)
