#include "row_sum.h"

void dct_row_sum_f32(const float *x, float *y, int32_t rows, int32_t cols) {
    for (int32_t r = 0; r < rows; ++r) {
        float sum = 0.0f;
        for (int32_t c = 0; c < cols; ++c) {
            sum += x[r * cols + c];
        }
        y[r] = sum;
    }
}
