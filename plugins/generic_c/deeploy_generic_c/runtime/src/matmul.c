/*
 * Matrix products: dcg_gemm_f32 (ONNX Gemm) and dcg_matmul_f32 (ONNX MatMul with batch broadcasting).
 * The same core also serves the convolution kernels (conv.c calls dcg_gemm_f32).
 *
 * Why it is written this way
 *  - The core computes Y += op(A) * op(B) where A and B are addressed through (row, column) element
 *    strides, so every transA/transB combination goes through one piece of code.
 *  - For M >= DCG_MR the product is register blocked: a DCG_MR x DCG_NR tile of Y lives in scalar
 *    accumulators across the whole k loop.  The tile is spelled out with plain scalars on purpose:
 *    GCC's SLP vectoriser turns the 8 consecutive columns into SIMD registers even at plain -O2
 *    (where the loop vectoriser only handles loops with constant trip counts), whereas an
 *    accumulator array would stay in memory.  B is first packed, a DCG_KC x DCG_NR panel at a time,
 *    into a small stack buffer: this makes transposed B contiguous, keeps the panel in L1 while all
 *    rows of A stream over it, and zero-pads the last, partial column panel.
 *  - For M < DCG_MR (typically batch-1 fully connected layers) packing would cost as much as the
 *    product, so rows are computed directly: i-k-j "axpy" form with four k at a time when B rows
 *    are contiguous, dot products with eight partial sums when B is transposed.
 *  - Gemm's alpha/beta/C are applied in a separate epilogue, Y = alpha * (A*B) + beta * C, which
 *    matches the rounding order of the reference implementation; its cost is O(M*N).
 *  - No allocation: the only buffer is a fixed 8 KiB array on the stack.
 */
#include <string.h>

#include "dcg_kernels.h"

#define DCG_MR 4   /* rows of a register tile */
#define DCG_NR 8   /* columns of a register tile (one packed B panel) */
#define DCG_KC 256 /* depth of a packed B panel */

/* ---- register tiles ------------------------------------------------------------------------- */

#define DCG_TILE_LOAD(r)                                                                             \
    float c##r##0 = Y[(r) * ldy + 0], c##r##1 = Y[(r) * ldy + 1], c##r##2 = Y[(r) * ldy + 2],        \
          c##r##3 = Y[(r) * ldy + 3], c##r##4 = Y[(r) * ldy + 4], c##r##5 = Y[(r) * ldy + 5],        \
          c##r##6 = Y[(r) * ldy + 6], c##r##7 = Y[(r) * ldy + 7];
#define DCG_TILE_FMA(r)                                                                              \
    {                                                                                                \
        const float a = A[(r) * ars + k * acs];                                                      \
        c##r##0 += a * b[0];                                                                         \
        c##r##1 += a * b[1];                                                                         \
        c##r##2 += a * b[2];                                                                         \
        c##r##3 += a * b[3];                                                                         \
        c##r##4 += a * b[4];                                                                         \
        c##r##5 += a * b[5];                                                                         \
        c##r##6 += a * b[6];                                                                         \
        c##r##7 += a * b[7];                                                                         \
    }
#define DCG_TILE_STORE(r)                                                                            \
    Y[(r) * ldy + 0] = c##r##0;                                                                      \
    Y[(r) * ldy + 1] = c##r##1;                                                                      \
    Y[(r) * ldy + 2] = c##r##2;                                                                      \
    Y[(r) * ldy + 3] = c##r##3;                                                                      \
    Y[(r) * ldy + 4] = c##r##4;                                                                      \
    Y[(r) * ldy + 5] = c##r##5;                                                                      \
    Y[(r) * ldy + 6] = c##r##6;                                                                      \
    Y[(r) * ldy + 7] = c##r##7;

/* Y[0..4, 0..8] += A[0..4, 0..kc] * Bp[0..kc, 0..8]  (Bp packed, row stride DCG_NR). */
static void tile_4x8(const float *restrict A, ptrdiff_t ars, ptrdiff_t acs, const float *restrict Bp,
                     float *restrict Y, ptrdiff_t ldy, int32_t kc)
{
    DCG_TILE_LOAD(0) DCG_TILE_LOAD(1) DCG_TILE_LOAD(2) DCG_TILE_LOAD(3)
    for (ptrdiff_t k = 0; k < kc; ++k) {
        const float *restrict b = Bp + k * DCG_NR;
        DCG_TILE_FMA(0) DCG_TILE_FMA(1) DCG_TILE_FMA(2) DCG_TILE_FMA(3)
    }
    DCG_TILE_STORE(0) DCG_TILE_STORE(1) DCG_TILE_STORE(2) DCG_TILE_STORE(3)
}

/* Y[0, 0..8] += A[0, 0..kc] * Bp[0..kc, 0..8]: the rows left over after the 4-row tiles. */
static void tile_1x8(const float *restrict A, ptrdiff_t acs, const float *restrict Bp, float *restrict Y,
                     int32_t kc)
{
    const ptrdiff_t ldy = 0, ars = 0;
    DCG_TILE_LOAD(0)
    for (ptrdiff_t k = 0; k < kc; ++k) {
        const float *restrict b = Bp + k * DCG_NR;
        DCG_TILE_FMA(0)
    }
    DCG_TILE_STORE(0)
    (void)ars;
}

/* ---- small-M row kernels -------------------------------------------------------------------- */

/* y[0..n) += a0*b0 + a1*b1 + a2*b2 + a3*b3 (four rows of B per pass over y). */
static void axpy4(float *restrict y, float a0, const float *restrict b0, float a1, const float *restrict b1,
                  float a2, const float *restrict b2, float a3, const float *restrict b3, int32_t n)
{
    int32_t j = 0;
    for (; j + 16 <= n; j += 16) {
        for (int32_t t = 0; t < 16; ++t) {
            y[j + t] += a0 * b0[j + t] + a1 * b1[j + t] + a2 * b2[j + t] + a3 * b3[j + t];
        }
    }
    for (; j < n; ++j) {
        y[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
    }
}

static void axpy1(float *restrict y, float a, const float *restrict b, int32_t n)
{
    int32_t j = 0;
    for (; j + 16 <= n; j += 16) {
        for (int32_t t = 0; t < 16; ++t) {
            y[j + t] += a * b[j + t];
        }
    }
    for (; j < n; ++j) {
        y[j] += a * b[j];
    }
}

/* Dot product of two contiguous vectors with eight independent partial sums. */
static float dot_contig(const float *restrict a, const float *restrict b, int32_t n)
{
    float acc[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
    int32_t k = 0;
    for (; k + 8 <= n; k += 8) {
        for (int32_t t = 0; t < 8; ++t) {
            acc[t] += a[k + t] * b[k + t];
        }
    }
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; k < n; ++k) {
        s += a[k] * b[k];
    }
    return s;
}

/* Y[M, N] += A * B for M < DCG_MR, without packing. */
static void gemm_small_m(int32_t M, int32_t N, int32_t K, const float *restrict A, ptrdiff_t ars, ptrdiff_t acs,
                         const float *restrict B, ptrdiff_t brs, ptrdiff_t bcs, float *restrict Y, ptrdiff_t ldy)
{
    for (int32_t i = 0; i < M; ++i) {
        const float *restrict a = A + i * ars;
        float *restrict y = Y + i * ldy;
        if (bcs == 1) {
            /* B rows contiguous: accumulate a whole row of Y, four rows of B at a time. */
            int32_t k = 0;
            for (; k + 4 <= K; k += 4) {
                axpy4(y, a[k * acs], B + k * brs, a[(k + 1) * acs], B + (k + 1) * brs, a[(k + 2) * acs],
                      B + (k + 2) * brs, a[(k + 3) * acs], B + (k + 3) * brs, N);
            }
            for (; k < K; ++k) {
                axpy1(y, a[k * acs], B + k * brs, N);
            }
        } else if (brs == 1 && acs == 1) {
            /* B transposed: every output is a dot product of two contiguous vectors. */
            for (int32_t j = 0; j < N; ++j) {
                y[j] += dot_contig(a, B + j * bcs, K);
            }
        } else {
            for (int32_t j = 0; j < N; ++j) {
                float s = 0.0f;
                for (int32_t k = 0; k < K; ++k) {
                    s += a[k * acs] * B[k * brs + j * bcs];
                }
                y[j] += s;
            }
        }
    }
}

/* ---- core ----------------------------------------------------------------------------------- */

/* Y[M, N] (row stride ldy) += A * B with A(i, k) = A[i*ars + k*acs] and B(k, j) = B[k*brs + j*bcs]. */
static void gemm_acc(int32_t M, int32_t N, int32_t K, const float *restrict A, ptrdiff_t ars, ptrdiff_t acs,
                     const float *restrict B, ptrdiff_t brs, ptrdiff_t bcs, float *restrict Y, ptrdiff_t ldy)
{
    float panel[DCG_KC * DCG_NR];
    float edge[DCG_MR * DCG_NR];

    if (M <= 0 || N <= 0 || K <= 0) {
        return;
    }
    if (M < DCG_MR) {
        gemm_small_m(M, N, K, A, ars, acs, B, brs, bcs, Y, ldy);
        return;
    }
    for (int32_t j0 = 0; j0 < N; j0 += DCG_NR) {
        const int32_t nr = N - j0 < DCG_NR ? N - j0 : DCG_NR;
        for (int32_t k0 = 0; k0 < K; k0 += DCG_KC) {
            const int32_t kc = K - k0 < DCG_KC ? K - k0 : DCG_KC;
            /* Pack B[k0:k0+kc, j0:j0+nr] into panel[kc][DCG_NR], zero-padding missing columns. */
            for (int32_t k = 0; k < kc; ++k) {
                const float *restrict brow = B + (k0 + k) * brs + j0 * bcs;
                float *restrict prow = panel + k * DCG_NR;
                if (bcs == 1 && nr == DCG_NR) {
                    for (int32_t t = 0; t < DCG_NR; ++t) {
                        prow[t] = brow[t];
                    }
                } else {
                    int32_t t = 0;
                    for (; t < nr; ++t) {
                        prow[t] = brow[t * bcs];
                    }
                    for (; t < DCG_NR; ++t) {
                        prow[t] = 0.0f;
                    }
                }
            }
            const float *restrict ablk = A + k0 * acs;
            int32_t i = 0;
            if (nr == DCG_NR) {
                for (; i + DCG_MR <= M; i += DCG_MR) {
                    tile_4x8(ablk + i * ars, ars, acs, panel, Y + i * ldy + j0, ldy, kc);
                }
                for (; i < M; ++i) {
                    tile_1x8(ablk + i * ars, acs, panel, Y + i * ldy + j0, kc);
                }
            } else {
                /* Partial column panel: run the tile on a local copy of the valid part of Y. */
                for (; i < M; i += DCG_MR) {
                    const int32_t mr = M - i < DCG_MR ? M - i : DCG_MR;
                    for (int32_t r = 0; r < mr; ++r) {
                        for (int32_t t = 0; t < DCG_NR; ++t) {
                            edge[r * DCG_NR + t] = t < nr ? Y[(i + r) * ldy + j0 + t] : 0.0f;
                        }
                    }
                    if (mr == DCG_MR) {
                        tile_4x8(ablk + i * ars, ars, acs, panel, edge, DCG_NR, kc);
                    } else {
                        for (int32_t r = 0; r < mr; ++r) {
                            tile_1x8(ablk + (i + r) * ars, acs, panel, edge + r * DCG_NR, kc);
                        }
                    }
                    for (int32_t r = 0; r < mr; ++r) {
                        for (int32_t t = 0; t < nr; ++t) {
                            Y[(i + r) * ldy + j0 + t] = edge[r * DCG_NR + t];
                        }
                    }
                }
            }
        }
    }
}

/* ---- public kernels ------------------------------------------------------------------------- */

void dcg_gemm_f32(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict Y,
                  int32_t M, int32_t N, int32_t K, int32_t transA, int32_t transB, float alpha, float beta,
                  int32_t c_rows, int32_t c_cols)
{
    const ptrdiff_t ars = transA ? 1 : K, acs = transA ? M : 1;
    const ptrdiff_t brs = transB ? 1 : N, bcs = transB ? K : 1;

    memset(Y, 0, (size_t)M * (size_t)N * sizeof(float));
    gemm_acc(M, N, K, A, ars, acs, B, brs, bcs, Y, N);

    const int use_c = C != NULL && beta != 0.0f;
    if (!use_c && alpha == 1.0f) {
        return;
    }
    for (int32_t i = 0; i < M; ++i) {
        float *restrict y = Y + (ptrdiff_t)i * N;
        if (!use_c) {
            for (int32_t j = 0; j < N; ++j) {
                y[j] = alpha * y[j];
            }
            continue;
        }
        const float *restrict c = C + (c_rows == 1 ? 0 : (ptrdiff_t)i * c_cols);
        if (c_cols == 1) {
            const float bc = beta * c[0];
            for (int32_t j = 0; j < N; ++j) {
                y[j] = alpha * y[j] + bc;
            }
        } else {
            for (int32_t j = 0; j < N; ++j) {
                y[j] = alpha * y[j] + beta * c[j];
            }
        }
    }
}

void dcg_matmul_f32(const float *restrict A, const float *restrict B, float *restrict Y, int32_t M, int32_t N,
                    int32_t K, int32_t batch_ndim, const int32_t *batch_shape, const int32_t *a_strides,
                    const int32_t *b_strides)
{
    const ptrdiff_t a_mat = (ptrdiff_t)M * K, b_mat = (ptrdiff_t)K * N, y_mat = (ptrdiff_t)M * N;
    int32_t batch = 1;
    int a_dense = 1, b_shared = 1;
    ptrdiff_t expect = 1;

    for (int32_t d = batch_ndim - 1; d >= 0; --d) {
        batch *= batch_shape[d];
        if (batch_shape[d] != 1) {
            a_dense = a_dense && a_strides[d] == expect;
            b_shared = b_shared && b_strides[d] == 0;
        }
        expect *= batch_shape[d];
    }
    memset(Y, 0, (size_t)batch * (size_t)y_mat * sizeof(float));
    if (batch == 0) {
        return;
    }
    if (a_dense && b_shared) {
        /* Every batch multiplies a distinct A by the same B: one tall product [batch*M, K] x [K, N]. */
        gemm_acc(batch * M, N, K, A, K, 1, B, N, 1, Y, N);
        return;
    }

    int32_t idx[DCG_MAX_DIMS] = {0};
    ptrdiff_t a_off = 0, b_off = 0;
    for (int32_t b = 0; b < batch; ++b) {
        gemm_acc(M, N, K, A + a_off * a_mat, K, 1, B + b_off * b_mat, N, 1, Y + (ptrdiff_t)b * y_mat, N);
        for (int32_t d = batch_ndim - 1; d >= 0; --d) {
            a_off += a_strides[d];
            b_off += b_strides[d];
            if (++idx[d] < batch_shape[d]) {
                break;
            }
            a_off -= (ptrdiff_t)a_strides[d] * batch_shape[d];
            b_off -= (ptrdiff_t)b_strides[d] * batch_shape[d];
            idx[d] = 0;
        }
    }
}

void dcg_gemm_acc_f32(const float *restrict A, const float *restrict B, float *restrict Y, int32_t M, int32_t N,
                      int32_t K, int32_t ldy)
{
    gemm_acc(M, N, K, A, K, 1, B, N, 1, Y, ldy);
}
