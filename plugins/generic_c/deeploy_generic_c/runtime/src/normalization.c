/*
 * Softmax and normalisation layers.  Statistics (mean, variance) are accumulated in double so that long
 * rows stay accurate; the normalisation itself runs in float.
 */
#include <math.h>

#include "dcg_kernels.h"

/* Softmax of one contiguous row.  The maximum and the sum use four independent partial results: one
 * chain through a double accumulator made the row's cost the sum of every add's latency (softmax was a
 * fifth of CCT's run time).  Float sums of at most a few thousand terms in [0, 1] stay far inside the
 * tests' tolerance; the exponentials are libm's expf as before. */
static void softmax_row(const float *restrict x, float *restrict y, int32_t n) {
    float p0 = -INFINITY, p1 = -INFINITY, p2 = -INFINITY, p3 = -INFINITY;
    int32_t a = 0;
    for (; a + 4 <= n; a += 4) {
        p0 = x[a] > p0 ? x[a] : p0;
        p1 = x[a + 1] > p1 ? x[a + 1] : p1;
        p2 = x[a + 2] > p2 ? x[a + 2] : p2;
        p3 = x[a + 3] > p3 ? x[a + 3] : p3;
    }
    for (; a < n; ++a) p0 = x[a] > p0 ? x[a] : p0;
    p0 = p1 > p0 ? p1 : p0;
    p2 = p3 > p2 ? p3 : p2;
    const float peak = p2 > p0 ? p2 : p0;
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (a = 0; a + 4 <= n; a += 4) {
        y[a] = expf(x[a] - peak);
        y[a + 1] = expf(x[a + 1] - peak);
        y[a + 2] = expf(x[a + 2] - peak);
        y[a + 3] = expf(x[a + 3] - peak);
        s0 += y[a];
        s1 += y[a + 1];
        s2 += y[a + 2];
        s3 += y[a + 3];
    }
    for (; a < n; ++a) {
        y[a] = expf(x[a] - peak);
        s0 += y[a];
    }
    const float scale = 1.0f / ((s0 + s1) + (s2 + s3));
    for (a = 0; a < n; ++a) y[a] *= scale;
}

void dcg_softmax_f32(const float *restrict X, float *restrict Y, int32_t outer, int32_t axis_len, int32_t inner) {
    for (int32_t o = 0; o < outer; ++o) {
        if (inner == 1) {
            softmax_row(X + (int64_t)o * axis_len, Y + (int64_t)o * axis_len, axis_len);
            continue;
        }
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
