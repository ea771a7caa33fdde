/*
 * Softmax and normalisation layers.  The normalisations' statistics (mean, variance) are accumulated in
 * double so that long rows stay accurate; the normalisation itself runs in float.  A contiguous softmax
 * row sums its terms (each in [0, 1]) in float with four partial sums.
 */
#include <math.h>
#include <string.h>

#include "dcg_kernels.h"

/* e^x for x <= 0, within 2 ulp of libm's expf: 2^n * e^r with n = round(x / ln 2) (rounded by the
 * 1.5 * 2^23 shift, whose low mantissa bits then hold n), r = x - n ln 2 in two parts (|r| <= ln 2 / 2) and
 * e^r by its degree-7 Taylor polynomial (truncation below 1.2e-7 relative).  Inputs below -87 (-inf
 * included) count as -87, about 1.6e-38: a softmax term 1e-38 times its row's largest instead of 0.  The
 * clamp compares the bit patterns as integers: a float comparison may trap on NaN, so GCC would not
 * if-convert it, and the loop calling this would stay scalar (a libm call per element before). */
static inline float exp_nonpositive(float x) {
    uint32_t pattern;
    memcpy(&pattern, &x, sizeof pattern);
    pattern = pattern > 0xC2AE0000u ? 0xC2AE0000u : pattern; /* 0xC2AE0000 is -87.0f */
    memcpy(&x, &pattern, sizeof x);
    const float shifted = x * 1.44269504f + 12582912.0f;
    const float n = shifted - 12582912.0f;
    const float r = (x - n * 0.693145752f) - n * 1.42860677e-06f;
    float p = 1.0f / 5040.0f;
    p = p * r + 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits;
    memcpy(&bits, &shifted, sizeof bits);
    bits = (bits - 0x4B400000 + 127) * (1 << 23); /* 2^n as float bits */
    float scale;
    memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

/* Softmax of one contiguous row.  The maximum and the sum use four independent partial results (one
 * chain through a double accumulator made the row's cost the sum of every add's latency; softmax was a
 * fifth of CCT's run time) and the exponentials are exp_nonpositive() eight at a time.  A NaN anywhere
 * makes the whole row NaN, as before (its term made the sum NaN). */
static void softmax_row(const float *restrict x, float *restrict y, int32_t n) {
    float p0 = -INFINITY, p1 = -INFINITY, p2 = -INFINITY, p3 = -INFINITY;
    int32_t a = 0, nan = 0;
    for (; a + 4 <= n; a += 4) {
        p0 = x[a] > p0 ? x[a] : p0;
        p1 = x[a + 1] > p1 ? x[a + 1] : p1;
        p2 = x[a + 2] > p2 ? x[a + 2] : p2;
        p3 = x[a + 3] > p3 ? x[a + 3] : p3;
        nan |= (x[a] != x[a]) | (x[a + 1] != x[a + 1]) | (x[a + 2] != x[a + 2]) | (x[a + 3] != x[a + 3]);
    }
    for (; a < n; ++a) {
        p0 = x[a] > p0 ? x[a] : p0;
        nan |= x[a] != x[a];
    }
    p0 = p1 > p0 ? p1 : p0;
    p2 = p3 > p2 ? p3 : p2;
    const float peak = p2 > p0 ? p2 : p0;
    if (nan) {
        for (a = 0; a < n; ++a) y[a] = NAN;
        return;
    }
    for (a = 0; a + 8 <= n; a += 8) {
        for (int32_t t = 0; t < 8; ++t) y[a + t] = exp_nonpositive(x[a + t] - peak);
    }
    for (; a < n; ++a) y[a] = exp_nonpositive(x[a] - peak);
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    for (a = 0; a + 4 <= n; a += 4) {
        s0 += y[a];
        s1 += y[a + 1];
        s2 += y[a + 2];
        s3 += y[a + 3];
    }
    for (; a < n; ++a) s0 += y[a];
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
