/*
 * Float reductions specialised by shape (ReduceSum/Mean/Max/Min).
 *
 * Why a header of inline functions rather than a kernel in src/: the code generator reduces any axis
 * set to a few loops over contiguous blocks and calls these helpers with constant arguments (sizes,
 * strides, the reduction kind).  Once inlined, every trip count is a constant and every pointer
 * argument is restrict-qualified (DCG_RESTRICT), which is what GCC's loop vectoriser needs at plain -O2
 * (its "very cheap" cost model rejects run-time trip counts and alias checks); clang vectorises either way.
 * A generic kernel walking the axes with an odometer cannot give the compiler either fact.
 *
 * Accumulation is in float (ONNX Runtime also sums in the element type): a kept contiguous block adds
 * row after row into Y, a reduced contiguous block uses eight independent partial results, which both
 * vectorises without reassociating and keeps long sums accurate.
 */
#ifndef DCG_REDUCE_H
#define DCG_REDUCE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dcg_kernels.h" /* DCG_RESTRICT */

#if defined(__GNUC__)
#define DCG_REDUCE_INLINE static inline __attribute__((always_inline))
#else
#define DCG_REDUCE_INLINE static inline
#endif

#define DCG_REDUCE_SUM 0
#define DCG_REDUCE_MAX 1
#define DCG_REDUCE_MIN 2

/* The value a reduction starts from: 0 for sums, -inf / +inf for max / min. */
DCG_REDUCE_INLINE float dcg_reduce_identity(int32_t kind) {
    return kind == DCG_REDUCE_MAX ? -INFINITY : kind == DCG_REDUCE_MIN ? INFINITY : 0.0f;
}

/* One step of the reduction: acc combined with v. */
DCG_REDUCE_INLINE float dcg_reduce_step(float acc, float v, int32_t kind) {
    if (kind == DCG_REDUCE_MAX) return v > acc ? v : acc;
    if (kind == DCG_REDUCE_MIN) return v < acc ? v : acc;
    return acc + v;
}

/* y[0..n) = the reduction's identity. */
DCG_REDUCE_INLINE void dcg_reduce_fill_f32(float *DCG_RESTRICT y, int32_t n, int32_t kind) {
    const float identity = dcg_reduce_identity(kind);
    for (int32_t i = 0; i < n; ++i) y[i] = identity;
}

/* y[j] = y[j] (op) x[r * cols + j] for every r < rows, j < cols: reduced rows over a kept contiguous block. */
DCG_REDUCE_INLINE void dcg_reduce_cols_f32(float *DCG_RESTRICT y, const float *DCG_RESTRICT x, int32_t rows,
                                           int32_t cols, int32_t kind) {
    for (int32_t r = 0; r < rows; ++r) {
        const float *DCG_RESTRICT row = x + (ptrdiff_t)r * cols;
        for (int32_t j = 0; j < cols; ++j) y[j] = dcg_reduce_step(y[j], row[j], kind);
    }
}

/* The reduction of the contiguous x[0..n), with eight independent partial results. */
DCG_REDUCE_INLINE float dcg_reduce_row_f32(const float *DCG_RESTRICT x, int32_t n, int32_t kind) {
    const float identity = dcg_reduce_identity(kind);
    float a0 = identity, a1 = identity, a2 = identity, a3 = identity;
    float a4 = identity, a5 = identity, a6 = identity, a7 = identity;
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        a0 = dcg_reduce_step(a0, x[i + 0], kind);
        a1 = dcg_reduce_step(a1, x[i + 1], kind);
        a2 = dcg_reduce_step(a2, x[i + 2], kind);
        a3 = dcg_reduce_step(a3, x[i + 3], kind);
        a4 = dcg_reduce_step(a4, x[i + 4], kind);
        a5 = dcg_reduce_step(a5, x[i + 5], kind);
        a6 = dcg_reduce_step(a6, x[i + 6], kind);
        a7 = dcg_reduce_step(a7, x[i + 7], kind);
    }
    for (; i < n; ++i) a0 = dcg_reduce_step(a0, x[i], kind);
    a0 = dcg_reduce_step(a0, a4, kind);
    a1 = dcg_reduce_step(a1, a5, kind);
    a2 = dcg_reduce_step(a2, a6, kind);
    a3 = dcg_reduce_step(a3, a7, kind);
    return dcg_reduce_step(dcg_reduce_step(a0, a2, kind), dcg_reduce_step(a1, a3, kind), kind);
}

/* y[k] = y[k] (op) reduction of x[k * n .. (k + 1) * n) for k < count: kept rows over a reduced contiguous block. */
DCG_REDUCE_INLINE void dcg_reduce_rows_f32(float *DCG_RESTRICT y, const float *DCG_RESTRICT x, int32_t count,
                                           int32_t n, int32_t kind) {
    for (int32_t k = 0; k < count; ++k) y[k] = dcg_reduce_step(y[k], dcg_reduce_row_f32(x + (ptrdiff_t)k * n, n, kind), kind);
}

/* y[0..n) /= divisor: ReduceMean's last step (a division, as ONNX defines the mean, not a reciprocal product). */
DCG_REDUCE_INLINE void dcg_reduce_divide_f32(float *DCG_RESTRICT y, int32_t n, float divisor) {
    for (int32_t i = 0; i < n; ++i) y[i] = y[i] / divisor;
}

#endif /* DCG_REDUCE_H */
