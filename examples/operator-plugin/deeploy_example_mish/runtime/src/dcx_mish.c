/* Mish in float32: y = x * tanh(ln(1 + e^x)).
 *
 * softplus(x) is computed as log1p(exp(x)) where exp cannot overflow; above
 * 20 it equals x in float32 (the correction e^-x is below half an ulp), and
 * tanh of it is 1, so y = x there.  Each element is independent, so a tile or
 * one core's share of a tile is just a shorter array.
 */
#include <math.h>

#include "dcx_mish.h"

void dcx_mish_f32(const float *x, float *y, int32_t count) {
    for (int32_t i = 0; i < count; ++i) {
        const float value = x[i];
        const float softplus = value > 20.0f ? value : log1pf(expf(value));
        y[i] = value * tanhf(softplus);
    }
}
