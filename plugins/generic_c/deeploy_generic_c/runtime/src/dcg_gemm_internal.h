/* Internal: the shared row-major product used by matmul and convolution kernels. */
#ifndef DCG_GEMM_INTERNAL_H
#define DCG_GEMM_INTERNAL_H

#include "dcg_kernels.h"

/* Y[M, N] (+)= A[M, K] @ B[K, N]; accumulate != 0 adds to Y instead of overwriting it. */
void dcg_gemm_nn_acc(const float *restrict A, const float *restrict B, float *restrict Y, int32_t M, int32_t N,
                     int32_t K, int32_t accumulate);

#endif
