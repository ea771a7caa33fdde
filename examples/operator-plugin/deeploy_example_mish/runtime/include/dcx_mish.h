/* The Mish kernel of the deeploy-example-mish operator plugin. */
#ifndef DCX_MISH_H
#define DCX_MISH_H

#include <stdint.h>

/* y[i] = x[i] * tanh(softplus(x[i])) for i < count; x and y may be the same buffer. */
void dcx_mish_f32(const float *x, float *y, int32_t count);

#endif
