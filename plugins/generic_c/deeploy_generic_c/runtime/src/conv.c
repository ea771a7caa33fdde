/*
 * 2-D convolution (1-D is the H = 1 case).
 *
 * Three paths: depthwise (one filter per channel) as a direct loop, pointwise (1x1, no padding, unit
 * strides) as a GEMM on the input itself, and the general case as im2col into the caller's scratch
 * followed by the same GEMM, one group of one image at a time.  The scratch size rule is shared with the
 * code generator through dcg_conv2d_scratch_floats().
 */
#include <stddef.h>

#include "dcg_kernels.h"

static int32_t is_pointwise(int32_t KH, int32_t KW, int32_t stride_h, int32_t stride_w, int32_t pad_top,
                            int32_t pad_left, int32_t pad_bottom, int32_t pad_right, int32_t dil_h, int32_t dil_w) {
    return KH == 1 && KW == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 &&
           pad_bottom == 0 && pad_right == 0 && dil_h == 1 && dil_w == 1;
}

int32_t dcg_conv2d_scratch_floats(int32_t C, int32_t M, int32_t KH, int32_t KW, int32_t OH, int32_t OW,
                                  int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                                  int32_t pad_bottom, int32_t pad_right, int32_t dil_h, int32_t dil_w,
                                  int32_t group) {
    if (group == C && C == M) return 0;
    if (is_pointwise(KH, KW, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w)) return 0;
    return (C / group) * KH * KW * OH * OW;
}

static void depthwise(const float *restrict X, const float *restrict Wt, const float *restrict B, float *restrict Y,
                      int32_t N, int32_t C, int32_t H, int32_t W, int32_t KH, int32_t KW, int32_t OH, int32_t OW,
                      int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t dil_h,
                      int32_t dil_w) {
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t c = 0; c < C; ++c) {
            const float *restrict x = X + ((int64_t)n * C + c) * H * W;
            const float *restrict w = Wt + (int64_t)c * KH * KW;
            float *restrict y = Y + ((int64_t)n * C + c) * OH * OW;
            const float bias = B != NULL ? B[c] : 0.0f;
            for (int32_t oh = 0; oh < OH; ++oh) {
                for (int32_t ow = 0; ow < OW; ++ow) {
                    float sum = bias;
                    for (int32_t kh = 0; kh < KH; ++kh) {
                        const int32_t ih = oh * stride_h - pad_top + kh * dil_h;
                        if (ih < 0 || ih >= H) continue;
                        for (int32_t kw = 0; kw < KW; ++kw) {
                            const int32_t iw = ow * stride_w - pad_left + kw * dil_w;
                            if (iw < 0 || iw >= W) continue;
                            sum += x[(int64_t)ih * W + iw] * w[kh * KW + kw];
                        }
                    }
                    y[(int64_t)oh * OW + ow] = sum;
                }
            }
        }
    }
}

static void im2col(const float *restrict x, float *restrict col, int32_t Cg, int32_t H, int32_t W, int32_t KH,
                   int32_t KW, int32_t OH, int32_t OW, int32_t stride_h, int32_t stride_w, int32_t pad_top,
                   int32_t pad_left, int32_t dil_h, int32_t dil_w) {
    for (int32_t c = 0; c < Cg; ++c) {
        for (int32_t kh = 0; kh < KH; ++kh) {
            for (int32_t kw = 0; kw < KW; ++kw) {
                float *restrict row = col + (((int64_t)c * KH + kh) * KW + kw) * OH * OW;
                for (int32_t oh = 0; oh < OH; ++oh) {
                    const int32_t ih = oh * stride_h - pad_top + kh * dil_h;
                    float *restrict out = row + (int64_t)oh * OW;
                    if (ih < 0 || ih >= H) {
                        for (int32_t ow = 0; ow < OW; ++ow) out[ow] = 0.0f;
                        continue;
                    }
                    const float *restrict in = x + ((int64_t)c * H + ih) * W;
                    for (int32_t ow = 0; ow < OW; ++ow) {
                        const int32_t iw = ow * stride_w - pad_left + kw * dil_w;
                        out[ow] = (iw >= 0 && iw < W) ? in[iw] : 0.0f;
                    }
                }
            }
        }
    }
}

void dcg_conv2d_f32(const float *restrict X, const float *restrict Wt, const float *restrict B, float *restrict Y,
                    int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t KH, int32_t KW, int32_t OH,
                    int32_t OW, int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                    int32_t dil_h, int32_t dil_w, int32_t group, float *restrict scratch) {
    if (group == C && C == M) {
        depthwise(X, Wt, B, Y, N, C, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);
        return;
    }
    const int32_t Cg = C / group, Mg = M / group, spatial = OH * OW, patch = Cg * KH * KW;
    const int32_t pointwise = scratch == NULL;
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t g = 0; g < group; ++g) {
            const float *restrict x = X + ((int64_t)n * C + (int64_t)g * Cg) * H * W;
            float *restrict y = Y + ((int64_t)n * M + (int64_t)g * Mg) * spatial;
            const float *restrict w = Wt + (int64_t)g * Mg * patch;
            const float *cols = x;
            if (!pointwise) {
                im2col(x, scratch, Cg, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);
                cols = scratch;
            }
            dcg_gemm_f32(w, cols, NULL, y, Mg, spatial, patch, 0, 0, 1.0f, 0.0f, 1, 1);
            if (B != NULL) {
                for (int32_t m = 0; m < Mg; ++m) {
                    const float bias = B[g * Mg + m];
                    float *restrict row = y + (int64_t)m * spatial;
                    for (int32_t s = 0; s < spatial; ++s) row[s] += bias;
                }
            }
        }
    }
}
