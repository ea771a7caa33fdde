/* Kernels of the test operator plugins: element-wise, so a tile is just a shorter array. */
#include "dct_test_ops.h"

void dct_bitwise_not_i8(const int8_t *x, int8_t *y, int32_t count) {
    for (int32_t i = 0; i < count; ++i) {
        y[i] = (int8_t)~x[i];
    }
}

void dct_relu_f32(const float *x, float *y, int32_t count) {
    for (int32_t i = 0; i < count; ++i) {
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
