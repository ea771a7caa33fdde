/*
 * deeploy_core generic C platform: portable C99 float32 kernels.
 *
 * Conventions
 *  - Tensors are dense, row-major (C order), NCHW for images.  Sizes are int32_t element counts.
 *  - Output buffers never overlap input or scratch buffers, hence `restrict` (DCG_RESTRICT, below, says why
 *    that holds and is checked).  Two read-only arguments may point at the same tensor (Mul(x, x)).
 *  - No kernel allocates memory; scratch space, when needed, is passed in by the caller with the
 *    size given by the matching *_scratch_floats() rule documented next to the kernel.
 *  - "Generic" data-movement kernels (transpose, concat, slice, pad, gather) work on any element
 *    type: they take the element size in bytes.
 *  - Broadcasting follows numpy/ONNX.  The compiler passes the broadcast output shape and, for each
 *    operand, element strides in that shape (0 along broadcast dimensions).
 */
#ifndef DCG_KERNELS_H
#define DCG_KERNELS_H

#include <stdint.h>
#include <stddef.h>

/* DCG_RESTRICT: `restrict` in this header, spelled so that C++ includes it too.
 *
 * Sound because no kernel is ever given an output (or scratch) buffer that overlaps another buffer it touches:
 *  - the arena plan keeps every input, output and scratch buffer of a layer alive at the layer's step, and the
 *    core's verifier refuses a plan in which two buffers alive at one step overlap, so a layer's output never
 *    reuses the bytes of its own input (only those of tensors dead before it);
 *  - a view (Reshape, Flatten, Squeeze, contiguous Split) shares its source's bytes but is never written by a
 *    kernel: only alias layers produce views, and they emit no call;
 *  - tiled code places all of a layer's (or a fused pattern's) tile buffers, every slot, at once in the compute
 *    level, each block its own bytes; a fused consumer reads its producer's output block, never its own;
 *  - no template passes one buffer twice except as read-only operands (Mul(x, x), MatMul(x, x)), which ISO C
 *    allows: restrict forbids overlap only where the object is modified.
 * tests/test_restrict_buffers.py in the generic C plugin checks the first three on the compiled plans.
 *
 * C++ has no `restrict`; GCC, Clang and MSVC take `__restrict` with the same meaning, and a qualifier on a
 * parameter is no part of a function's type, so the C objects link with a C++ caller either way. */
#ifndef DCG_RESTRICT
#if !defined(__cplusplus)
#define DCG_RESTRICT restrict
#elif defined(__GNUC__) || defined(_MSC_VER)
#define DCG_RESTRICT __restrict
#else
#define DCG_RESTRICT
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define DCG_MAX_DIMS 8

/* ---------- element-wise binary: Y = A op B ------------------------------------------------------
 * op in {add, sub, mul, div, pow, max, min}.  Three shapes of call per op:
 *   dcg_<op>_f32        : A and B have the same shape, `size` elements.
 *   dcg_<op>_scalar_f32 : B is a single element (B[0]) applied to every A[i].
 *   dcg_<op>_rscalar_f32: A is a single element (A[0]) applied to every B[i]:  Y[i] = A[0] op B[i].
 *   dcg_<op>_bcast_f32  : general broadcast over `ndim` (<= DCG_MAX_DIMS) output dimensions.
 * pow follows C powf semantics (powf(A, B)). */
#define DCG_DECLARE_BINARY(op)                                                                                 \
    void dcg_##op##_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B, float *DCG_RESTRICT Y,       \
                        int32_t size);                                                                         \
    void dcg_##op##_scalar_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B,                       \
                               float *DCG_RESTRICT Y, int32_t size);                                           \
    void dcg_##op##_rscalar_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B,                      \
                                float *DCG_RESTRICT Y, int32_t size);                                          \
    void dcg_##op##_bcast_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B, float *DCG_RESTRICT Y, \
                              int32_t ndim, const int32_t *out_shape, const int32_t *a_strides,                \
                              const int32_t *b_strides);
DCG_DECLARE_BINARY(add)
DCG_DECLARE_BINARY(sub)
DCG_DECLARE_BINARY(mul)
DCG_DECLARE_BINARY(div)
DCG_DECLARE_BINARY(pow)
DCG_DECLARE_BINARY(max)
DCG_DECLARE_BINARY(min)

/* ---------- element-wise unary: Y[i] = f(X[i]) ---------------------------------------------------
 * exp is computed in double and rounded to float (correctly rounded for the peer tests). */
void dcg_relu_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_sqrt_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_exp_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_log_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_sigmoid_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_tanh_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_floor_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_ceil_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_neg_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_abs_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_reciprocal_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_erf_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_softplus_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
void dcg_hardswish_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size);
/* Y = max(0, min(1, alpha*x + beta)) */
void dcg_hardsigmoid_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, float alpha, float beta);
/* Y = min(max(x, lo), hi) */
void dcg_clip_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, float lo, float hi);
/* Y = x >= 0 ? x : alpha*x */
void dcg_leakyrelu_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, float alpha);
/* Y = x >= 0 ? x : alpha*(exp(x)-1) */
void dcg_elu_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, float alpha);
/* Swish: Y = x * sigmoid(alpha*x) */
void dcg_swish_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, float alpha);
/* Gelu: exact (erf) when approximate == 0, tanh approximation when approximate == 1 */
void dcg_gelu_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t size, int32_t approximate);

/* Y[i * ldy + j] += sum_k A[i * K + k] * B[k * N + j] (i < M, j < N): a product into rows of a wider matrix
 * (the blocked im2col convolution writes each block's columns into Y's channel rows in place). */
void dcg_gemm_acc_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B, float *DCG_RESTRICT Y, int32_t M,
                      int32_t N, int32_t K, int32_t ldy);

/* ---------- convolution -------------------------------------------------------------------------
 * X: [N, C, H, W], Wt: [M, C/group, KH, KW], B: [M] or NULL, Y: [N, M, OH, OW].
 * pad_top/pad_left are the leading pads; trailing pads are implied by OH/OW.
 * 1-D convolution is called with H = KH = OH = 1, stride_h = dil_h = 1, pad_top = 0.
 * scratch: dcg_conv2d_scratch_floats() floats, or NULL when that is 0:
 *   0 if group == C == M (depthwise, one filter per channel) or
 *        (KH == KW == 1, strides 1, pads 0, dilations 1) (pointwise);
 *   else (C/group) * KH * KW * min(block, OH * OW) (im2col of `block` output positions at a time). */
int32_t dcg_conv2d_scratch_floats(int32_t C, int32_t M, int32_t KH, int32_t KW, int32_t OH, int32_t OW,
                                  int32_t stride_h, int32_t stride_w, int32_t pad_top, int32_t pad_left,
                                  int32_t pad_bottom, int32_t pad_right, int32_t dil_h, int32_t dil_w,
                                  int32_t group, int32_t block);
void dcg_conv2d_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT Wt, const float *DCG_RESTRICT B,
                    float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M, int32_t KH,
                    int32_t KW, int32_t OH, int32_t OW, int32_t stride_h, int32_t stride_w, int32_t pad_top,
                    int32_t pad_left, int32_t dil_h, int32_t dil_w, int32_t group, int32_t block,
                    float *DCG_RESTRICT scratch);

/* ConvTranspose: X: [N, C, H, W], Wt: [C, M/group, KH, KW], B: [M] or NULL, Y: [N, M, OH, OW].
 * Output position oh = ih*stride_h - pad_top + kh*dil_h (contributions outside [0, OH) dropped). */
void dcg_conv_transpose2d_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT Wt, const float *DCG_RESTRICT B,
                              float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t H, int32_t W, int32_t M,
                              int32_t KH, int32_t KW, int32_t OH, int32_t OW, int32_t stride_h,
                              int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t dil_h,
                              int32_t dil_w, int32_t group);

/* ---------- matrix products ---------------------------------------------------------------------
 * Gemm: Y[M, N] = alpha * op(A) * op(B) + beta * C.
 *   A is [M, K] (or [K, M] when transA), B is [K, N] (or [N, K] when transB).
 *   C is NULL or has c_rows in {1, M} and c_cols in {1, N} (broadcast). */
void dcg_gemm_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B, const float *DCG_RESTRICT C,
                  float *DCG_RESTRICT Y, int32_t M, int32_t N, int32_t K, int32_t transA, int32_t transB,
                  float alpha, float beta, int32_t c_rows, int32_t c_cols);
/* MatMul with batch broadcasting: Y[b..., M, N] = A[b..., M, K] @ B[b..., K, N].
 * The batch dimensions (batch_ndim of them, possibly 0) have output shape batch_shape; a_strides and
 * b_strides give, per batch dimension, the stride in *matrices* (0 where the operand broadcasts). */
void dcg_matmul_f32(const float *DCG_RESTRICT A, const float *DCG_RESTRICT B, float *DCG_RESTRICT Y, int32_t M,
                    int32_t N, int32_t K, int32_t batch_ndim, const int32_t *batch_shape,
                    const int32_t *a_strides, const int32_t *b_strides);

/* ---------- normalisation -----------------------------------------------------------------------
 * Softmax over the middle dimension of X viewed as [outer, axis_len, inner]. */
void dcg_softmax_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t outer, int32_t axis_len,
                     int32_t inner);
/* LayerNorm: X viewed as [outer, norm_size]; scale [norm_size]; bias [norm_size] or NULL. Biased variance. */
void dcg_layernorm_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT scale, const float *DCG_RESTRICT bias,
                       float *DCG_RESTRICT Y, int32_t outer, int32_t norm_size, float epsilon);
/* BatchNormalization (inference): X [N, C, spatial]. */
void dcg_batchnorm_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT scale, const float *DCG_RESTRICT bias,
                       const float *DCG_RESTRICT mean, const float *DCG_RESTRICT var, float *DCG_RESTRICT Y, int32_t N,
                       int32_t C, int32_t spatial, float epsilon);
/* InstanceNormalization: X [N, C, spatial]; scale, bias [C]. */
void dcg_instancenorm_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT scale, const float *DCG_RESTRICT bias,
                          float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t spatial, float epsilon);
/* GroupNormalization: X [N, C, spatial], `groups` groups of C/groups channels; scale, bias per CHANNEL [C]. */
void dcg_groupnorm_f32(const float *DCG_RESTRICT X, const float *DCG_RESTRICT scale, const float *DCG_RESTRICT bias,
                       float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t spatial, int32_t groups,
                       float epsilon);

/* ---------- pooling -----------------------------------------------------------------------------
 * X [N, C, H, W] -> Y [N, C, OH, OW]; windows may extend past the input (padding, ceil_mode): padded
 * positions are ignored by max pooling; average pooling divides by the window size clipped to the
 * padded input when count_include_pad != 0, by the number of real input elements otherwise.
 * pad_bottom/pad_right bound the padded extent used by count_include_pad. 1-D pooling: H = KH = OH = 1. */
void dcg_maxpool2d_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t H,
                       int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t stride_h,
                       int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t dil_h, int32_t dil_w);
void dcg_avgpool2d_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t N, int32_t C, int32_t H,
                       int32_t W, int32_t OH, int32_t OW, int32_t KH, int32_t KW, int32_t stride_h,
                       int32_t stride_w, int32_t pad_top, int32_t pad_left, int32_t pad_bottom,
                       int32_t pad_right, int32_t count_include_pad);
/* Global pooling: X [NC, spatial] -> Y [NC]. */
void dcg_global_avgpool_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t NC, int32_t spatial);
void dcg_global_maxpool_f32(const float *DCG_RESTRICT X, float *DCG_RESTRICT Y, int32_t NC, int32_t spatial);

/* ---------- reductions --------------------------------------------------------------------------
 * Float ReduceSum/Mean/Max/Min are inline helpers in dcg_reduce.h, called with constant shapes. */

/* ---------- data movement (any element type) ----------------------------------------------------- */
/* Y = transpose(X, perm): Y.shape[i] = in_shape[perm[i]]. */
void dcg_transpose(const void *DCG_RESTRICT X, void *DCG_RESTRICT Y, int32_t elem_size, int32_t ndim,
                   const int32_t *in_shape, const int32_t *perm);
/* Concat along an axis: X viewed as [outer, axis_i * inner] per input; Y as [outer, sum(axis_i) * inner]. */
void dcg_concat(const void *const *inputs, const int32_t *axis_sizes, int32_t n_inputs, void *DCG_RESTRICT Y,
                int32_t elem_size, int32_t outer, int32_t inner);
/* Slice with per-dimension start and step (steps may be negative): Y[i...] = X[start + i*step ...]. */
void dcg_slice(const void *DCG_RESTRICT X, void *DCG_RESTRICT Y, int32_t elem_size, int32_t ndim,
               const int32_t *in_shape, const int32_t *out_shape, const int32_t *starts, const int32_t *steps);
/* Pad: out_shape = in_shape + begin + end pads (pads may be negative = crop).
 * mode 0 = constant (value points to one element), 1 = reflect, 2 = edge. */
void dcg_pad(const void *DCG_RESTRICT X, void *DCG_RESTRICT Y, int32_t elem_size, int32_t ndim,
             const int32_t *in_shape, const int32_t *out_shape, const int32_t *pads_begin, int32_t mode,
             const void *value);
/* Gather along an axis: X viewed as [outer, axis_len, inner]; Y as [outer, n_indices, inner].
 * Negative indices count from the end; indices still outside the axis are clamped to it.  indices are int64
 * (ONNX's type). */
void dcg_gather(const void *DCG_RESTRICT X, const int64_t *DCG_RESTRICT indices, void *DCG_RESTRICT Y,
                int32_t elem_size, int32_t outer, int32_t axis_len, int32_t inner, int32_t n_indices);
/* Copy `bytes` bytes (used for Expand-free copies and materialised aliases). */
void dcg_copy(const void *DCG_RESTRICT X, void *DCG_RESTRICT Y, int32_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* DCG_KERNELS_H */
