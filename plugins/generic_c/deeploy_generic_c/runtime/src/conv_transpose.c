/*
 * Transposed 2-D convolution as a scatter: every input element adds its contribution to the output
 * window it maps to.  Simple and exact; transposed convolutions are rare in microcontroller networks.
 */
#include <stddef.h>

#include "dcg_kernels.h"

void dcg_conv_transpose2d_f32(const float *restrict X, const float *restrict Wt, const float *restrict B,
                              float *restrict Y, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                              int32_t KH, int32_t KW, int32_t OH, int32_t OW, int32_t stride_h,
                              int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t dil_h,
                              int32_t dil_w, int32_t group) {
    const int32_t Cg = C / group, Mg = M / group;
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t m = 0; m < M; ++m) {
            float *restrict y = Y + ((int64_t)n * M + m) * OH * OW;
            const float bias = B != NULL ? B[m] : 0.0f;
            for (int32_t s = 0; s < OH * OW; ++s) y[s] = bias;
        }
        for (int32_t g = 0; g < group; ++g) {
            for (int32_t c = 0; c < Cg; ++c) {
                const int32_t channel = g * Cg + c;
                const float *restrict x = X + ((int64_t)n * C + channel) * H * W;
                for (int32_t m = 0; m < Mg; ++m) {
                    const float *restrict w = Wt + (((int64_t)channel * Mg + m) * KH) * KW;
                    float *restrict y = Y + ((int64_t)n * M + (int64_t)g * Mg + m) * OH * OW;
                    for (int32_t ih = 0; ih < H; ++ih) {
                        for (int32_t iw = 0; iw < W; ++iw) {
                            const float value = x[(int64_t)ih * W + iw];
                            for (int32_t kh = 0; kh < KH; ++kh) {
                                const int32_t oh = ih * stride_h - pad_top + kh * dil_h;
                                if (oh < 0 || oh >= OH) continue;
                                for (int32_t kw = 0; kw < KW; ++kw) {
                                    const int32_t ow = iw * stride_w - pad_left + kw * dil_w;
                                    if (ow < 0 || ow >= OW) continue;
                                    y[(int64_t)oh * OW + ow] += value * w[kh * KW + kw];
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
