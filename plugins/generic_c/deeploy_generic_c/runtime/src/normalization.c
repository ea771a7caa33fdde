/*
 * Softmax and normalisation layers.  Statistics (mean, variance) are accumulated in double so that long
 * rows stay accurate; the normalisation itself runs in float.
 */
#include <math.h>

#include "dcg_kernels.h"

void dcg_softmax_f32(const float *restrict X, float *restrict Y, int32_t outer, int32_t axis_len, int32_t inner) {
    for (int32_t o = 0; o < outer; ++o) {
        for (int32_t i = 0; i < inner; ++i) {
            const float *restrict x = X + (int64_t)o * axis_len * inner + i;
            float *restrict y = Y + (int64_t)o * axis_len * inner + i;
            float peak = -INFINITY;
            for (int32_t a = 0; a < axis_len; ++a) peak = x[(int64_t)a * inner] > peak ? x[(int64_t)a * inner] : peak;
            double sum = 0.0;
            for (int32_t a = 0; a < axis_len; ++a) {
                const float e = expf(x[(int64_t)a * inner] - peak);
                y[(int64_t)a * inner] = e;
                sum += e;
            }
            const float scale = (float)(1.0 / sum);
            for (int32_t a = 0; a < axis_len; ++a) y[(int64_t)a * inner] *= scale;
        }
    }
}

static void moments(const float *restrict x, int64_t count, int64_t stride, double *mean, double *variance) {
    double sum = 0.0, squares = 0.0;
    for (int64_t i = 0; i < count; ++i) sum += x[i * stride];
    const double m = sum / (double)count;
    for (int64_t i = 0; i < count; ++i) {
        const double d = x[i * stride] - m;
        squares += d * d;
    }
    *mean = m;
    *variance = squares / (double)count;
}

void dcg_layernorm_f32(const float *restrict X, const float *restrict scale, const float *restrict bias,
                       float *restrict Y, int32_t outer, int32_t norm_size, float epsilon) {
    for (int32_t o = 0; o < outer; ++o) {
        const float *restrict x = X + (int64_t)o * norm_size;
        float *restrict y = Y + (int64_t)o * norm_size;
        double mean, variance;
        moments(x, norm_size, 1, &mean, &variance);
        const float m = (float)mean, inv = (float)(1.0 / sqrt(variance + (double)epsilon));
        for (int32_t i = 0; i < norm_size; ++i) {
            const float normalised = (x[i] - m) * inv * scale[i];
            y[i] = bias != NULL ? normalised + bias[i] : normalised;
        }
    }
}

void dcg_batchnorm_f32(const float *restrict X, const float *restrict scale, const float *restrict bias,
                       const float *restrict mean, const float *restrict var, float *restrict Y, int32_t N,
                       int32_t C, int32_t spatial, float epsilon) {
    for (int32_t c = 0; c < C; ++c) {
        const float a = scale[c] / sqrtf(var[c] + epsilon);
        const float b = bias[c] - mean[c] * a;
        for (int32_t n = 0; n < N; ++n) {
            const float *restrict x = X + ((int64_t)n * C + c) * spatial;
            float *restrict y = Y + ((int64_t)n * C + c) * spatial;
            for (int32_t s = 0; s < spatial; ++s) y[s] = x[s] * a + b;
        }
    }
}

void dcg_instancenorm_f32(const float *restrict X, const float *restrict scale, const float *restrict bias,
                          float *restrict Y, int32_t N, int32_t C, int32_t spatial, float epsilon) {
    for (int32_t p = 0; p < N * C; ++p) {
        const int32_t c = p % C;
        const float *restrict x = X + (int64_t)p * spatial;
        float *restrict y = Y + (int64_t)p * spatial;
        double mean, variance;
        moments(x, spatial, 1, &mean, &variance);
        const float m = (float)mean, inv = (float)(1.0 / sqrt(variance + (double)epsilon));
        for (int32_t s = 0; s < spatial; ++s) y[s] = (x[s] - m) * inv * scale[c] + bias[c];
    }
}

void dcg_groupnorm_f32(const float *restrict X, const float *restrict scale, const float *restrict bias,
                       float *restrict Y, int32_t N, int32_t C, int32_t spatial, int32_t groups, float epsilon) {
    const int32_t per_group = C / groups;
    for (int32_t n = 0; n < N; ++n) {
        for (int32_t g = 0; g < groups; ++g) {
            const int64_t base = ((int64_t)n * C + (int64_t)g * per_group) * spatial;
            double mean, variance;
            moments(X + base, (int64_t)per_group * spatial, 1, &mean, &variance);
            const float m = (float)mean, inv = (float)(1.0 / sqrt(variance + (double)epsilon));
            for (int32_t c = 0; c < per_group; ++c) {
                const int32_t channel = g * per_group + c;
                const float *restrict x = X + base + (int64_t)c * spatial;
                float *restrict y = Y + base + (int64_t)c * spatial;
                for (int32_t s = 0; s < spatial; ++s) y[s] = (x[s] - m) * inv * scale[channel] + bias[channel];
            }
        }
    }
}
