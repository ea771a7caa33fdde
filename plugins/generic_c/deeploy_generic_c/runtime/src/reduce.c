/*
 * Reductions over any set of axes.  The kept dimensions are walked by an outer odometer and the reduced
 * ones by an inner odometer, so no accumulator array (and no allocation) is needed; sums are kept in
 * double.  When the reduced axes are the innermost ones the inner walk is contiguous.
 */
#include <math.h>

#include "dcg_kernels.h"

typedef enum { REDUCE_SUM, REDUCE_MEAN, REDUCE_MAX, REDUCE_MIN } reduce_kind;

static void reduce(const float *restrict X, float *restrict Y, int32_t ndim, const int32_t *shape,
                   const int32_t *reduce_mask, reduce_kind kind) {
    int32_t kept_shape[DCG_MAX_DIMS], kept_stride[DCG_MAX_DIMS], red_shape[DCG_MAX_DIMS], red_stride[DCG_MAX_DIMS];
    int32_t n_kept = 0, n_red = 0;
    int64_t stride = 1, outputs = 1, count = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        if (reduce_mask[d]) {
            red_shape[n_red] = shape[d];
            red_stride[n_red++] = (int32_t)stride;
            count *= shape[d];
        } else {
            kept_shape[n_kept] = shape[d];
            kept_stride[n_kept++] = (int32_t)stride;
            outputs *= shape[d];
        }
        stride *= shape[d];
    }
    /* index 0 of the arrays above is the innermost dimension */
    int32_t kept_index[DCG_MAX_DIMS] = {0};
    int64_t base = 0;
    for (int64_t out = 0; out < outputs; ++out) {
        int32_t red_index[DCG_MAX_DIMS] = {0};
        int64_t offset = 0;
        double sum = 0.0;
        float best = kind == REDUCE_MAX ? -INFINITY : INFINITY;
        for (int64_t r = 0; r < count; ++r) {
            const float value = X[base + offset];
            if (kind == REDUCE_MAX) best = value > best ? value : best;
            else if (kind == REDUCE_MIN) best = value < best ? value : best;
            else sum += value;
            for (int32_t d = 0; d < n_red; ++d) {
                ++red_index[d];
                offset += red_stride[d];
                if (red_index[d] < red_shape[d]) break;
                offset -= (int64_t)red_stride[d] * red_shape[d];
                red_index[d] = 0;
            }
        }
        if (kind == REDUCE_SUM) Y[out] = (float)sum;
        else if (kind == REDUCE_MEAN) Y[out] = (float)(sum / (double)count);
        else Y[out] = best;
        for (int32_t d = 0; d < n_kept; ++d) {
            ++kept_index[d];
            base += kept_stride[d];
            if (kept_index[d] < kept_shape[d]) break;
            base -= (int64_t)kept_stride[d] * kept_shape[d];
            kept_index[d] = 0;
        }
    }
}

void dcg_reduce_mean_f32(const float *restrict X, float *restrict Y, int32_t ndim, const int32_t *shape,
                         const int32_t *reduce_mask) {
    reduce(X, Y, ndim, shape, reduce_mask, REDUCE_MEAN);
}

void dcg_reduce_sum_f32(const float *restrict X, float *restrict Y, int32_t ndim, const int32_t *shape,
                        const int32_t *reduce_mask) {
    reduce(X, Y, ndim, shape, reduce_mask, REDUCE_SUM);
}

void dcg_reduce_max_f32(const float *restrict X, float *restrict Y, int32_t ndim, const int32_t *shape,
                        const int32_t *reduce_mask) {
    reduce(X, Y, ndim, shape, reduce_mask, REDUCE_MAX);
}

void dcg_reduce_min_f32(const float *restrict X, float *restrict Y, int32_t ndim, const int32_t *shape,
                        const int32_t *reduce_mask) {
    reduce(X, Y, ndim, shape, reduce_mask, REDUCE_MIN);
}
