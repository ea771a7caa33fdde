/*
 * Data movement for any element type (the element size is a parameter): transpose, concat, slice, pad,
 * gather, copy.  Whole rows are copied with memcpy where they are contiguous; element-wise walks use
 * typed copies for the common sizes so they compile to plain loads and stores.
 */
#include <string.h>

#include "dcg_kernels.h"

static void copy_element(unsigned char *restrict to, const unsigned char *restrict from, int32_t size) {
    switch (size) {
        case 1: *to = *from; break;
        case 2: memcpy(to, from, 2); break;
        case 4: memcpy(to, from, 4); break;
        case 8: memcpy(to, from, 8); break;
        default: memcpy(to, from, (size_t)size); break;
    }
}

static void strides_of(int32_t ndim, const int32_t *shape, int64_t *strides) {
    int64_t running = 1;
    for (int32_t d = ndim - 1; d >= 0; --d) {
        strides[d] = running;
        running *= shape[d];
    }
}

void dcg_transpose(const void *restrict X, void *restrict Y, int32_t elem_size, int32_t ndim, const int32_t *in_shape,
                   const int32_t *perm) {
    int64_t in_strides[DCG_MAX_DIMS], step[DCG_MAX_DIMS];
    int32_t out_shape[DCG_MAX_DIMS], index[DCG_MAX_DIMS] = {0};
    strides_of(ndim, in_shape, in_strides);
    int64_t total = 1;
    for (int32_t d = 0; d < ndim; ++d) {
        out_shape[d] = in_shape[perm[d]];
        step[d] = in_strides[perm[d]];
        total *= out_shape[d];
    }
    const unsigned char *restrict x = (const unsigned char *)X;
    unsigned char *restrict y = (unsigned char *)Y;
    const int32_t inner = ndim > 0 ? out_shape[ndim - 1] : 1;
    const int64_t inner_step = ndim > 0 ? step[ndim - 1] : 1;
    int64_t offset = 0;
    for (int64_t at = 0; at < total; at += inner) {
        if (inner_step == 1) {
            memcpy(y + at * elem_size, x + offset * elem_size, (size_t)inner * (size_t)elem_size);
        } else if (elem_size == 4) {
            for (int32_t i = 0; i < inner; ++i) memcpy(y + (at + i) * 4, x + (offset + i * inner_step) * 4, 4);
        } else {
            for (int32_t i = 0; i < inner; ++i)
                copy_element(y + (at + i) * elem_size, x + (offset + i * inner_step) * elem_size, elem_size);
        }
        for (int32_t d = ndim - 2; d >= 0; --d) {
            ++index[d];
            offset += step[d];
            if (index[d] < out_shape[d]) break;
            offset -= step[d] * out_shape[d];
            index[d] = 0;
        }
    }
}

void dcg_concat(const void *const *inputs, const int32_t *axis_sizes, int32_t n_inputs, void *restrict Y,
                int32_t elem_size, int32_t outer, int32_t inner) {
    unsigned char *restrict y = (unsigned char *)Y;
    for (int32_t o = 0; o < outer; ++o) {
        for (int32_t i = 0; i < n_inputs; ++i) {
            const size_t bytes = (size_t)axis_sizes[i] * (size_t)inner * (size_t)elem_size;
            memcpy(y, (const unsigned char *)inputs[i] + (size_t)o * bytes, bytes);
            y += bytes;
        }
    }
}

void dcg_slice(const void *restrict X, void *restrict Y, int32_t elem_size, int32_t ndim, const int32_t *in_shape,
               const int32_t *out_shape, const int32_t *starts, const int32_t *steps) {
    int64_t in_strides[DCG_MAX_DIMS];
    int32_t index[DCG_MAX_DIMS] = {0};
    strides_of(ndim, in_shape, in_strides);
    int64_t total = 1, offset = 0;
    for (int32_t d = 0; d < ndim; ++d) {
        total *= out_shape[d];
        offset += (int64_t)starts[d] * in_strides[d];
    }
    const unsigned char *restrict x = (const unsigned char *)X;
    unsigned char *restrict y = (unsigned char *)Y;
    for (int64_t at = 0; at < total; ++at) {
        copy_element(y + at * elem_size, x + offset * elem_size, elem_size);
        for (int32_t d = ndim - 1; d >= 0; --d) {
            ++index[d];
            offset += (int64_t)steps[d] * in_strides[d];
            if (index[d] < out_shape[d]) break;
            offset -= (int64_t)steps[d] * in_strides[d] * out_shape[d];
            index[d] = 0;
        }
    }
}

static int32_t source_index(int32_t position, int32_t dim, int32_t mode) {
    if (position >= 0 && position < dim) return position;
    if (mode == 0) return -1;
    if (mode == 2) return position < 0 ? 0 : dim - 1;
    if (dim == 1) return 0;
    const int32_t period = 2 * (dim - 1);
    int32_t p = position % period;
    if (p < 0) p += period;
    return p < dim ? p : period - p;
}

void dcg_pad(const void *restrict X, void *restrict Y, int32_t elem_size, int32_t ndim, const int32_t *in_shape,
             const int32_t *out_shape, const int32_t *pads_begin, int32_t mode, const void *value) {
    int64_t in_strides[DCG_MAX_DIMS];
    int32_t index[DCG_MAX_DIMS] = {0};
    strides_of(ndim, in_shape, in_strides);
    int64_t total = 1;
    for (int32_t d = 0; d < ndim; ++d) total *= out_shape[d];
    const unsigned char *restrict x = (const unsigned char *)X;
    unsigned char *restrict y = (unsigned char *)Y;
    for (int64_t at = 0; at < total; ++at) {
        int64_t offset = 0;
        int32_t inside = 1;
        for (int32_t d = 0; d < ndim; ++d) {
            const int32_t source = source_index(index[d] - pads_begin[d], in_shape[d], mode);
            if (source < 0) {
                inside = 0;
                break;
            }
            offset += (int64_t)source * in_strides[d];
        }
        if (inside) copy_element(y + at * elem_size, x + offset * elem_size, elem_size);
        else copy_element(y + at * elem_size, (const unsigned char *)value, elem_size);
        for (int32_t d = ndim - 1; d >= 0; --d) {
            if (++index[d] < out_shape[d]) break;
            index[d] = 0;
        }
    }
}

void dcg_gather(const void *restrict X, const int64_t *restrict indices, void *restrict Y, int32_t elem_size,
                int32_t outer, int32_t axis_len, int32_t inner, int32_t n_indices) {
    const size_t row = (size_t)inner * (size_t)elem_size;
    const unsigned char *restrict x = (const unsigned char *)X;
    unsigned char *restrict y = (unsigned char *)Y;
    for (int32_t o = 0; o < outer; ++o) {
        for (int32_t t = 0; t < n_indices; ++t) {
            int64_t index = indices[t];
            if (index < 0) index += axis_len;
            /* Run-time indices (token ids) may lie outside the table: ONNX leaves that an error, C would read out of
               bounds, so they are clamped to the first or last row (a defined result, no undefined behaviour). */
            if (index < 0) index = 0;
            if (index >= axis_len) index = (int64_t)axis_len - 1;
            memcpy(y + ((size_t)o * n_indices + t) * row, x + ((size_t)o * axis_len + (size_t)index) * row, row);
        }
    }
}

void dcg_copy(const void *restrict X, void *restrict Y, int32_t bytes) { memcpy(Y, X, (size_t)bytes); }
