/*
 * 2-D convolution (1-D is the H = 1 case).
 *
 * Three paths: depthwise (one filter per channel) as a direct loop, pointwise (1x1, no padding, unit
 * strides) as a GEMM on the input itself, and the general case as im2col followed by the same GEMM.
 *
 * Why im2col by blocks: a whole-layer im2col buffer is patch x OH x OW floats (27 KiB for a 3x3 conv of
 * 3 channels on 16 x 16), more than the layer's activations, and it sat in the arena for nothing but
 * this one call.  The general path gathers `block` output positions at a time (a run of the flattened
 * OH x OW index, which may span rows) and multiplies them into the columns first .. first + block of
 * every output channel's row of Y in place (a GEMM with Y's row stride).  The scratch,
 * patch x min(block, OH x OW) floats, depends on the number of output positions only, never on the
 * output channels, and never exceeds the whole-layer im2col: a tiler can size it for a tile.  The code
 * generator picks `block` (ops/linear.py) with the rule of dcg_conv2d_scratch_floats().
 */
#include <stddef.h>
#include <string.h>

#include "dcg_kernels.h"

static int32_t is_pointwise(int32_t KH, int32_t KW, int32_t stride_h, int32_t stride_w, int32_t pad_top,
                            int32_t pad_left, int32_t pad_bottom, int32_t pad_right, int32_t dil_h, int32_t dil_w) {
    return KH == 1 && KW == 1 && stride_h == 1 && stride_w == 1 && pad_top == 0 && pad_left == 0 &&
           pad_bottom == 0 && pad_right == 0 && dil_h == 1 && dil_w == 1;
}

int32_t dcg_conv2d_scratch_floats(int32_t C, int32_t M, int32_t KH, int32_t KW, int32_t OH, int32_t OW,
                                  int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                                  int32_t pad_bottom, int32_t pad_right, int32_t dil_h, int32_t dil_w,
                                  int32_t group, int32_t block) {
    if (group == C && C == M) return 0;
    if (is_pointwise(KH, KW, stride_h, stride_w, pad_top, pad_left, pad_bottom, pad_right, dil_h, dil_w)) return 0;
    const int32_t spatial = OH * OW;
    return (C / group) * KH * KW * (block < spatial ? block : spatial);
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

/* The first output column whose input column ow * stride - pad_left + offset is >= lower (0 or W). */
static int32_t first_column_at(int32_t lower, int32_t offset, int32_t stride, int32_t pad_left, int32_t OW) {
    const int32_t need = lower + pad_left - offset; /* ow * stride >= need */
    const int32_t ow = need <= 0 ? 0 : (need + stride - 1) / stride;
    return ow < OW ? ow : OW;
}

/* col[r][0..count) = the input under tap r = (c, kh, kw) for the output positions first .. first + count - 1
 * of the flattened OH x OW index (zeros where the tap falls into the padding). */
static void im2col_block(const float *restrict x, float *restrict col, int32_t Cg, int32_t H, int32_t W, int32_t KH,
                         int32_t KW, int32_t OW, int32_t stride_h, int32_t stride_w, int32_t pad_top,
                         int32_t pad_left, int32_t dil_h, int32_t dil_w, int32_t first, int32_t count) {
    for (int32_t c = 0; c < Cg; ++c) {
        for (int32_t kh = 0; kh < KH; ++kh) {
            for (int32_t kw = 0; kw < KW; ++kw) {
                float *restrict out = col + (((ptrdiff_t)c * KH + kh) * KW + kw) * count;
                const int32_t offset = kw * dil_w;
                const int32_t lo = first_column_at(0, offset, stride_w, pad_left, OW);
                const int32_t hi = first_column_at(W, offset, stride_w, pad_left, OW);
                int32_t oh = first / OW, ow = first % OW, left = count;
                while (left > 0) {
                    const int32_t end = OW - ow < left ? OW : ow + left;
                    const int32_t ih = oh * stride_h - pad_top + kh * dil_h;
                    if (ih < 0 || ih >= H) {
                        for (int32_t j = ow; j < end; ++j) *out++ = 0.0f;
                    } else {
                        const float *restrict in = x + ((ptrdiff_t)c * H + ih) * W - pad_left + offset;
                        const int32_t a = lo > ow ? (lo < end ? lo : end) : ow;
                        const int32_t b = hi < end ? (hi > a ? hi : a) : end;
                        for (int32_t j = ow; j < a; ++j) *out++ = 0.0f;
                        if (stride_w == 1) {
                            memcpy(out, in + a, (size_t)(b - a) * sizeof(float));
                            out += b - a;
                        } else {
                            for (int32_t j = a; j < b; ++j) *out++ = in[(ptrdiff_t)j * stride_w];
                        }
                        for (int32_t j = b; j < end; ++j) *out++ = 0.0f;
                    }
                    left -= end - ow;
                    ow = 0;
                    ++oh;
                }
            }
        }
    }
}

/* Y[m * ldy + s] += sum over k of w[m * patch + k] * cols[k * count + s], k in order for every output.
 * dcg_gemm_acc_f32's register tiles add k in order, but below 4 rows (DCG_MR in matmul.c) it sums four k
 * at once; doing those rows here keeps a conv's rounding the same however many output channels a call
 * gets, so a tiled or core-split conv is bit-exact with the untiled one. */
static void product_in_order(const float *restrict w, const float *restrict cols, float *restrict y, int32_t Mg,
                             int32_t count, int32_t patch, int32_t ldy) {
    for (int32_t m = 0; m < Mg; ++m) memset(y + (ptrdiff_t)m * ldy, 0, (size_t)count * sizeof(float));
    if (Mg >= 4) {
        dcg_gemm_acc_f32(w, cols, y, Mg, count, patch, ldy);
        return;
    }
    for (int32_t m = 0; m < Mg; ++m) {
        float *restrict row = y + (ptrdiff_t)m * ldy;
        for (int32_t k = 0; k < patch; ++k) {
            const float a = w[(ptrdiff_t)m * patch + k];
            const float *restrict b = cols + (ptrdiff_t)k * count;
            int32_t s = 0;
            for (; s + 16 <= count; s += 16) /* a constant inner trip count: vectorised at -O2 */
                for (int32_t t = 0; t < 16; ++t) row[s + t] += a * b[s + t];
            for (; s < count; ++s) row[s] += a * b[s];
        }
    }
}

void dcg_conv2d_f32(const float *restrict X, const float *restrict Wt, const float *restrict B, float *restrict Y,
                    int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t KH, int32_t KW, int32_t OH,
                    int32_t OW, int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                    int32_t dil_h, int32_t dil_w, int32_t group, int32_t block, float *restrict scratch) {
    if (group == C && C == M) {
        depthwise(X, Wt, B, Y, N, C, H, W, KH, KW, OH, OW, stride_h, stride_w, pad_top, pad_left, dil_h, dil_w);
        return;
    }
    const int32_t Cg = C / group, Mg = M / group, spatial = OH * OW, patch = Cg * KH * KW;
    const int32_t pointwise = scratch == NULL;
    if (pointwise || block > spatial) block = spatial;
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t g = 0; g < group; ++g) {
            const float *restrict x = X + ((int64_t)n * C + (int64_t)g * Cg) * H * W;
            float *restrict y = Y + ((int64_t)n * M + (int64_t)g * Mg) * spatial;
            const float *restrict w = Wt + (int64_t)g * Mg * patch;
            for (int32_t first = 0; first < spatial; first += block) {
                const int32_t count = spatial - first < block ? spatial - first : block;
                const float *cols = x;
                if (!pointwise) {
                    im2col_block(x, scratch, Cg, H, W, KH, KW, OW, stride_h, stride_w, pad_top, pad_left, dil_h,
                                 dil_w, first, count);
                    cols = scratch;
                }
                product_in_order(w, cols, y + first, Mg, count, patch, spatial);
                if (B == NULL) continue;
                for (int32_t m = 0; m < Mg; ++m) {
                    const float bias = B[g * Mg + m];
                    float *restrict row = y + (ptrdiff_t)m * spatial + first;
                    for (int32_t s = 0; s < count; ++s) row[s] += bias;
                }
            }
        }
    }
}
