/*
 * Matrix products: Gemm (with transposes, alpha/beta and broadcast C) and batched MatMul.
 *
 * The core loop is i-k-j: one row of A times rows of B accumulated into one row of the output, so the
 * innermost loop runs over contiguous memory of both B and Y and vectorises.  With transB the rows of B
 * are the columns of op(B), so the product becomes contiguous dot products instead.
 */
#include "dcg_gemm_internal.h"

void dcg_gemm_nn_acc(const float *restrict A, const float *restrict B, float *restrict Y, int32_t M, int32_t N,
                     int32_t K, int32_t accumulate) {
    for (int32_t i = 0; i < M; ++i) {
        float *restrict y = Y + (int64_t)i * N;
        if (!accumulate) {
            for (int32_t j = 0; j < N; ++j) y[j] = 0.0f;
        }
        const float *restrict a = A + (int64_t)i * K;
        for (int32_t k = 0; k < K; ++k) {
            const float aik = a[k];
            const float *restrict b = B + (int64_t)k * N;
            for (int32_t j = 0; j < N; ++j) y[j] += aik * b[j];
        }
    }
}

void dcg_gemm_f32(const float *restrict A, const float *restrict B, const float *restrict C, float *restrict Y,
                  int32_t M, int32_t N, int32_t K, int32_t transA, int32_t transB, float alpha, float beta,
                  int32_t c_rows, int32_t c_cols) {
    for (int32_t i = 0; i < M; ++i) {
        float *restrict y = Y + (int64_t)i * N;
        if (transB) {
            for (int32_t j = 0; j < N; ++j) {
                const float *restrict b = B + (int64_t)j * K;
                float sum = 0.0f;
                if (transA) {
                    for (int32_t k = 0; k < K; ++k) sum += A[(int64_t)k * M + i] * b[k];
                } else {
                    const float *restrict a = A + (int64_t)i * K;
                    for (int32_t k = 0; k < K; ++k) sum += a[k] * b[k];
                }
                y[j] = sum;
            }
        } else {
            for (int32_t j = 0; j < N; ++j) y[j] = 0.0f;
            for (int32_t k = 0; k < K; ++k) {
                const float aik = transA ? A[(int64_t)k * M + i] : A[(int64_t)i * K + k];
                const float *restrict b = B + (int64_t)k * N;
                for (int32_t j = 0; j < N; ++j) y[j] += aik * b[j];
            }
        }
        if (alpha != 1.0f) {
            for (int32_t j = 0; j < N; ++j) y[j] *= alpha;
        }
        if (C != NULL && beta != 0.0f) {
            const float *restrict c = C + (c_rows == 1 ? 0 : (int64_t)i * c_cols);
            if (c_cols == 1) {
                const float value = beta * c[0];
                for (int32_t j = 0; j < N; ++j) y[j] += value;
            } else if (beta == 1.0f) {
                for (int32_t j = 0; j < N; ++j) y[j] += c[j];
            } else {
                for (int32_t j = 0; j < N; ++j) y[j] += beta * c[j];
            }
        }
    }
}

void dcg_matmul_f32(const float *restrict A, const float *restrict B, float *restrict Y, int32_t M, int32_t N,
                    int32_t K, int32_t batch_ndim, const int32_t *batch_shape, const int32_t *a_strides,
                    const int32_t *b_strides) {
    int32_t index[DCG_MAX_DIMS] = {0};
    int32_t batches = 1;
    for (int32_t d = 0; d < batch_ndim; ++d) batches *= batch_shape[d];
    int64_t a_matrix = 0, b_matrix = 0;
    for (int32_t batch = 0; batch < batches; ++batch) {
        dcg_gemm_nn_acc(A + a_matrix * M * K, B + b_matrix * K * N, Y + (int64_t)batch * M * N, M, N, K, 0);
        for (int32_t d = batch_ndim - 1; d >= 0; --d) {
            ++index[d];
            a_matrix += a_strides[d];
            b_matrix += b_strides[d];
            if (index[d] < batch_shape[d]) break;
            a_matrix -= (int64_t)a_strides[d] * batch_shape[d];
            b_matrix -= (int64_t)b_strides[d] * batch_shape[d];
            index[d] = 0;
        }
    }
}
