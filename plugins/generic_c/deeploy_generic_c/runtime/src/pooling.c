/*
 * Max and average pooling over 2-D windows (1-D is H = 1) and global pooling.
 *
 * Windows are clipped to the input, so padding and ceil_mode need no padded copy of the input.
 */
#include <math.h>

#include "dcg_kernels.h"

static int32_t max_i32(int32_t a, int32_t b) { return a > b ? a : b; }
static int32_t min_i32(int32_t a, int32_t b) { return a < b ? a : b; }

/* The taps k in [*lo, *hi) of a window starting at `origin` (k * dil + origin inside [0, size)). */
static void taps_inside(int32_t origin, int32_t dil, int32_t taps, int32_t size, int32_t *lo, int32_t *hi) {
    if (dil == 1) { /* the common case, without the two integer divisions (a third of a small pool's time) */
        *lo = min_i32(max_i32(-origin, 0), taps);
        *hi = max_i32(*lo, min_i32(size - origin, taps));
        return;
    }
    const int32_t first = origin >= 0 ? 0 : (-origin + dil - 1) / dil;
    const int32_t past = size - origin <= 0 ? 0 : (size - origin + dil - 1) / dil;
    *lo = min_i32(first, taps);
    *hi = max_i32(*lo, min_i32(past, taps));
}

/* The maximum of the window rows x + kh * row_step (kh < rows) over taps kw in [kw_lo, kw_hi).  A select
 * rather than a branch on the data (which mispredicts on every new maximum); a NaN, once taken, stays. */
static float window_max(const float *restrict x, int32_t rows, int32_t row_step, int32_t kw_lo, int32_t kw_hi,
                        int32_t dil_w) {
    float best = -INFINITY;
    for (int32_t kh = 0; kh < rows; ++kh, x += row_step) {
        for (int32_t kw = kw_lo; kw < kw_hi; ++kw) {
            const float value = x[kw * dil_w];
            best = (value > best || value != value) ? value : best;
        }
    }
    return best;
}

/* The window's bounds are clipped once per output row and, for the columns, only at the borders: the
 * interior columns [ow_a, ow_b) need no test at all.  A NaN anywhere in the window makes the output NaN,
 * as in ONNX Runtime. */
void dcg_maxpool2d_f32(const float *restrict X, float *restrict Y, int32_t N, int32_t C, int32_t H, int32_t W,
                       int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t stride_h, int32_t stride_w,
                       int32_t pad_top, int32_t pad_left, int32_t dil_h, int32_t dil_w) {
    const int32_t span = (KW - 1) * dil_w; /* interior: 0 <= ow * stride_w - pad_left and its + span < W */
    const int32_t ow_a = min_i32((pad_left + stride_w - 1) / stride_w, OW);
    const int32_t ow_b = W - span + pad_left <= 0 ? ow_a
                                                  : max_i32(ow_a, min_i32((W - span + pad_left + stride_w - 1) / stride_w, OW));
    for (int32_t plane = 0; plane < N * C; ++plane) {
        const float *restrict x = X + (int64_t)plane * H * W;
        float *restrict y = Y + (int64_t)plane * OH * OW;
        for (int32_t oh = 0; oh < OH; ++oh, y += OW) {
            const int32_t h0 = oh * stride_h - pad_top;
            int32_t kh_lo, kh_hi;
            taps_inside(h0, dil_h, KH, H, &kh_lo, &kh_hi);
            const float *restrict rows = x + (int64_t)(h0 + kh_lo * dil_h) * W - pad_left;
            const int32_t count = kh_hi - kh_lo, step = dil_h * W;
            for (int32_t ow = 0; ow < OW; ++ow) {
                if (ow == ow_a) { /* the interior, then the right border */
                    for (; ow < ow_b; ++ow) y[ow] = window_max(rows + ow * stride_w, count, step, 0, KW, dil_w);
                    if (ow == OW) break;
                }
                int32_t kw_lo, kw_hi;
                taps_inside(ow * stride_w - pad_left, dil_w, KW, W, &kw_lo, &kw_hi);
                y[ow] = window_max(rows + ow * stride_w, count, step, kw_lo, kw_hi, dil_w);
            }
        }
    }
}

void dcg_avgpool2d_f32(const float *restrict X, float *restrict Y, int32_t N, int32_t C, int32_t H, int32_t W,
                       int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t stride_h, int32_t stride_w,
                       int32_t pad_top, int32_t pad_left, int32_t pad_bottom, int32_t pad_right,
                       int32_t count_include_pad) {
    for (int32_t plane = 0; plane < N * C; ++plane) {
        const float *restrict x = X + (int64_t)plane * H * W;
        float *restrict y = Y + (int64_t)plane * OH * OW;
        for (int32_t oh = 0; oh < OH; ++oh) {
            const int32_t h0 = oh * stride_h - pad_top, h1 = h0 + KH;
            const int32_t hs = max_i32(h0, 0), he = min_i32(h1, H);
            for (int32_t ow = 0; ow < OW; ++ow) {
                const int32_t w0 = ow * stride_w - pad_left, w1 = w0 + KW;
                const int32_t ws = max_i32(w0, 0), we = min_i32(w1, W);
                float sum = 0.0f;
                for (int32_t ih = hs; ih < he; ++ih) {
                    for (int32_t iw = ws; iw < we; ++iw) sum += x[(int64_t)ih * W + iw];
                }
                int32_t count;
                if (count_include_pad) {
                    count = (min_i32(h1, H + pad_bottom) - h0) * (min_i32(w1, W + pad_right) - w0);
                } else {
                    count = (he - hs) * (we - ws);
                }
                y[(int64_t)oh * OW + ow] = count > 0 ? sum / (float)count : 0.0f;
            }
        }
    }
}

void dcg_global_avgpool_f32(const float *restrict X, float *restrict Y, int32_t NC, int32_t spatial) {
    for (int32_t p = 0; p < NC; ++p) {
        const float *restrict x = X + (int64_t)p * spatial;
        double sum = 0.0;
        for (int32_t s = 0; s < spatial; ++s) sum += x[s];
        Y[p] = (float)(sum / spatial);
    }
}

void dcg_global_maxpool_f32(const float *restrict X, float *restrict Y, int32_t NC, int32_t spatial) {
    for (int32_t p = 0; p < NC; ++p) {
        const float *restrict x = X + (int64_t)p * spatial;
        float best = -INFINITY;
        for (int32_t s = 0; s < spatial; ++s) best = x[s] > best ? x[s] : best;
        Y[p] = best;
    }
}
