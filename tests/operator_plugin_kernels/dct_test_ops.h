/* Kernels of the operator plugins that tests/test_operator_plugins.py registers. */
#ifndef DCT_TEST_OPS_H
#define DCT_TEST_OPS_H

#include <stdint.h>

/* y[i] = ~x[i] (ONNX BitwiseNot on int8). */
void dct_bitwise_not_i8(const int8_t *x, int8_t *y, int32_t count);

/* y[i] = max(x[i], 0): a Relu that replaces the platform's own (override=True). */
void dct_relu_f32(const float *x, float *y, int32_t count);

#endif
