/* The kernel of the schema-less test op com.example::RowSum (tests/test_frontend_custom_ops.py). */
#ifndef DCT_ROW_SUM_H
#define DCT_ROW_SUM_H

#include <stdint.h>

/* y[r] = sum over c of x[r * cols + c], summed left to right as numpy's reference does for short rows. */
void dct_row_sum_f32(const float *x, float *y, int32_t rows, int32_t cols);

#endif
