/*
 * Recurrent layers (ONNX LSTM, GRU and RNN), float32; the contract is in dcg_recurrent.h.
 *
 * Every (direction, batch row) pair is an independent recurrence, so the kernel walks them one after the other
 * and keeps only that row's state (and its gate pre-activations) in the caller's scratch: memory does not grow
 * with the batch or the sequence.  Gate pre-activations are summed in float in the order bias, input product,
 * recurrent product, which keeps the result within float rounding of ONNX Runtime's GEMM-based kernels.
 */
#include <math.h>
#include <string.h>

#include "dcg_recurrent.h"

static float activate(const dcg_rnn_activation *f, float x) {
    switch (f->code) {
    case DCG_RNN_TANH: return tanhf(x);
    case DCG_RNN_RELU: return x > 0.0f ? x : 0.0f;
    case DCG_RNN_SOFTSIGN: return x / (1.0f + fabsf(x));
    case DCG_RNN_SOFTPLUS: return logf(1.0f + expf(x));
    case DCG_RNN_AFFINE: return f->alpha * x + f->beta;
    case DCG_RNN_LEAKY_RELU: return x >= 0.0f ? x : f->alpha * x;
    case DCG_RNN_THRESHOLDED_RELU: return x > f->alpha ? x : 0.0f;
    case DCG_RNN_SCALED_TANH: return f->alpha * tanhf(f->beta * x);
    case DCG_RNN_HARD_SIGMOID: {
        const float y = f->alpha * x + f->beta;
        return y < 0.0f ? 0.0f : (y > 1.0f ? 1.0f : y);
    }
    case DCG_RNN_ELU: return x >= 0.0f ? x : f->alpha * (expf(x) - 1.0f);
    default: return 1.0f / (1.0f + expf(-x));
    }
}

static float clipped(float x, float clip) {
    if (clip > 0.0f) {
        if (x > clip) return clip;
        if (x < -clip) return -clip;
    }
    return x;
}

/* One element of a parameter tensor, dequantised when it is int8 (the arithmetic of DequantizeLinear). */
static float element(const dcg_rnn_tensor *t, int64_t i) {
    return t->values != NULL ? t->values[i] : (float)((int32_t)t->quantized[i] - t->zero_point) * t->scale;
}

/* out[r] += sum_k M[offset + r * cols + k] * v[k] for r in [0, rows). */
static void add_product(const dcg_rnn_tensor *M, int64_t offset, const float *restrict v, int32_t rows,
                        int32_t cols, float *restrict out) {
    for (int32_t r = 0; r < rows; ++r) {
        const int64_t row = offset + (int64_t)r * cols;
        float sum = 0.0f;
        if (M->values != NULL) {
            for (int32_t k = 0; k < cols; ++k) sum += M->values[row + k] * v[k];
        } else {
            for (int32_t k = 0; k < cols; ++k) {
                sum += (float)((int32_t)M->quantized[row + k] - M->zero_point) * M->scale * v[k];
            }
        }
        out[r] += sum;
    }
}

/* out[r] = Wb[first + r] + Rb[first + r] of the direction whose biases start at `base` (0 without B). */
static void load_bias(const dcg_rnn_tensor *B, int64_t base, int32_t gates_hidden, int32_t first, int32_t rows,
                      float *restrict out) {
    for (int32_t r = 0; r < rows; ++r) {
        out[r] = B == NULL ? 0.0f : element(B, base + first + r) + element(B, base + gates_hidden + first + r);
    }
}

static int32_t row_length(const dcg_rnn_geometry *g, const int32_t *sequence_lens, int32_t b) {
    if (sequence_lens == NULL) return g->seq_length;
    const int32_t length = sequence_lens[b];
    return length < 0 ? 0 : (length > g->seq_length ? g->seq_length : length);
}

static const float *input_at(const dcg_rnn_geometry *g, const float *X, int32_t t, int32_t b) {
    const int64_t step = g->layout ? (int64_t)b * g->seq_length + t : (int64_t)t * g->batch + b;
    return X + step * g->input_size;
}

static float *output_at(const dcg_rnn_geometry *g, float *Y, int32_t t, int32_t d, int32_t b) {
    const int64_t row = g->layout ? ((int64_t)b * g->seq_length + t) * g->directions + d
                                  : ((int64_t)t * g->directions + d) * g->batch + b;
    return Y + row * g->hidden;
}

/* Where the state of (direction d, row b) lives in initial_h/initial_c/Y_h/Y_c. */
static int64_t state_offset(const dcg_rnn_geometry *g, int32_t d, int32_t b) {
    const int64_t row = g->layout ? (int64_t)b * g->directions + d : (int64_t)d * g->batch + b;
    return row * g->hidden;
}

static void load_state(const float *initial, int64_t offset, int32_t hidden, float *restrict state) {
    if (initial == NULL) {
        memset(state, 0, (size_t)hidden * sizeof(float));
    } else {
        memcpy(state, initial + offset, (size_t)hidden * sizeof(float));
    }
}

/* Steps L.. of a row shorter than the sequence produce zeros in Y. */
static void zero_tail(const dcg_rnn_geometry *g, float *Y, int32_t length, int32_t d, int32_t b) {
    if (Y == NULL) return;
    for (int32_t t = length; t < g->seq_length; ++t) {
        memset(output_at(g, Y, t, d, b), 0, (size_t)g->hidden * sizeof(float));
    }
}

static int32_t runs_backwards(const dcg_rnn_geometry *g, int32_t d) {
    return g->directions == 2 ? d == 1 : g->reverse;
}

static dcg_rnn_tensor float_tensor(const float *values) {
    dcg_rnn_tensor tensor = {values, NULL, 0.0f, 0};
    return tensor;
}

void dcg_lstm_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                  const int32_t *sequence_lens, const float *initial_h, const float *initial_c, const float *P,
                  int32_t input_forget, const dcg_rnn_activation *activations, float *Y, float *Y_h, float *Y_c,
                  float *scratch) {
    const dcg_rnn_tensor w = float_tensor(W), r = float_tensor(R), b = float_tensor(B), p = float_tensor(P);
    dcg_lstm_mixed_f32(geometry, X, &w, &r, B == NULL ? NULL : &b, sequence_lens, initial_h, initial_c,
                       P == NULL ? NULL : &p, input_forget, activations, Y, Y_h, Y_c, scratch);
}

void dcg_gru_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                 const int32_t *sequence_lens, const float *initial_h, int32_t linear_before_reset,
                 const dcg_rnn_activation *activations, float *Y, float *Y_h, float *scratch) {
    const dcg_rnn_tensor w = float_tensor(W), r = float_tensor(R), b = float_tensor(B);
    dcg_gru_mixed_f32(geometry, X, &w, &r, B == NULL ? NULL : &b, sequence_lens, initial_h, linear_before_reset,
                      activations, Y, Y_h, scratch);
}

void dcg_lstm_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                        const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                        const float *initial_h, const float *initial_c, const dcg_rnn_tensor *P, int32_t input_forget,
                        const dcg_rnn_activation *activations, float *Y, float *Y_h, float *Y_c, float *scratch) {
    const dcg_rnn_geometry *g = geometry;
    const int32_t H = g->hidden, I = g->input_size, G = 4 * H;
    float *restrict h = scratch;
    float *restrict c = scratch + H;
    float *restrict gates = scratch + 2 * H; /* i, o, f, c pre-activations */
    for (int32_t d = 0; d < g->directions; ++d) {
        const int64_t w_base = (int64_t)d * G * I, r_base = (int64_t)d * G * H;
        const int64_t b_base = (int64_t)d * 2 * G, p_base = (int64_t)d * 3 * H;
        const dcg_rnn_activation *f_act = &activations[3 * d], *g_act = f_act + 1, *h_act = f_act + 2;
        for (int32_t b = 0; b < g->batch; ++b) {
            const int32_t length = row_length(g, sequence_lens, b);
            const int64_t state = state_offset(g, d, b);
            load_state(initial_h, state, H, h);
            load_state(initial_c, state, H, c);
            for (int32_t s = 0; s < length; ++s) {
                const int32_t t = runs_backwards(g, d) ? length - 1 - s : s;
                load_bias(B, b_base, G, 0, G, gates);
                add_product(W, w_base, input_at(g, X, t, b), G, I, gates);
                add_product(R, r_base, h, G, H, gates);
                for (int32_t k = 0; k < H; ++k) {
                    float pre_i = gates[k], pre_f = gates[2 * H + k];
                    if (P != NULL) {
                        pre_i += element(P, p_base + k) * c[k];
                        pre_f += element(P, p_base + 2 * H + k) * c[k];
                    }
                    const float in_gate = activate(f_act, clipped(pre_i, g->clip));
                    const float forget = input_forget ? 1.0f - in_gate : activate(f_act, clipped(pre_f, g->clip));
                    const float cell = activate(g_act, clipped(gates[3 * H + k], g->clip));
                    c[k] = forget * c[k] + in_gate * cell;
                    float pre_o = gates[H + k];
                    if (P != NULL) pre_o += element(P, p_base + H + k) * c[k];
                    const float out_gate = activate(f_act, clipped(pre_o, g->clip));
                    h[k] = out_gate * activate(h_act, c[k]);
                }
                if (Y != NULL) memcpy(output_at(g, Y, t, d, b), h, (size_t)H * sizeof(float));
            }
            zero_tail(g, Y, length, d, b);
            if (Y_h != NULL) memcpy(Y_h + state, h, (size_t)H * sizeof(float));
            if (Y_c != NULL) memcpy(Y_c + state, c, (size_t)H * sizeof(float));
        }
    }
}

void dcg_gru_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                       const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                       const float *initial_h, int32_t linear_before_reset, const dcg_rnn_activation *activations, float *Y,
                       float *Y_h, float *scratch) {
    const dcg_rnn_geometry *g = geometry;
    const int32_t H = g->hidden, I = g->input_size, G = 3 * H;
    float *restrict h = scratch;
    float *restrict zr = scratch + H;            /* z and r pre-activations (2H) */
    float *restrict candidate = scratch + 3 * H; /* W_h x + biases of the h gate */
    float *restrict recurrent = scratch + 4 * H; /* R_h h (+ Rb_h), or r * h before the product */
    for (int32_t d = 0; d < g->directions; ++d) {
        const int64_t w_base = (int64_t)d * G * I, r_base = (int64_t)d * G * H, b_base = (int64_t)d * 2 * G;
        const dcg_rnn_activation *f_act = &activations[2 * d], *g_act = f_act + 1;
        for (int32_t b = 0; b < g->batch; ++b) {
            const int32_t length = row_length(g, sequence_lens, b);
            const int64_t state = state_offset(g, d, b);
            load_state(initial_h, state, H, h);
            for (int32_t s = 0; s < length; ++s) {
                const int32_t t = runs_backwards(g, d) ? length - 1 - s : s;
                const float *x = input_at(g, X, t, b);
                load_bias(B, b_base, G, 0, 2 * H, zr);
                add_product(W, w_base, x, 2 * H, I, zr);
                add_product(R, r_base, h, 2 * H, H, zr);
                for (int32_t k = 0; k < 2 * H; ++k) zr[k] = activate(f_act, clipped(zr[k], g->clip));
                const float *z = zr, *r = zr + H;
                for (int32_t k = 0; k < H; ++k) candidate[k] = B == NULL ? 0.0f : element(B, b_base + 2 * H + k);
                add_product(W, w_base + (int64_t)2 * H * I, x, H, I, candidate);
                if (linear_before_reset) {
                    for (int32_t k = 0; k < H; ++k) recurrent[k] = B == NULL ? 0.0f : element(B, b_base + G + 2 * H + k);
                    add_product(R, r_base + (int64_t)2 * H * H, h, H, H, recurrent);
                    for (int32_t k = 0; k < H; ++k) candidate[k] += r[k] * recurrent[k];
                } else {
                    if (B != NULL) {
                        for (int32_t k = 0; k < H; ++k) candidate[k] += element(B, b_base + G + 2 * H + k);
                    }
                    for (int32_t k = 0; k < H; ++k) recurrent[k] = r[k] * h[k];
                    add_product(R, r_base + (int64_t)2 * H * H, recurrent, H, H, candidate);
                }
                for (int32_t k = 0; k < H; ++k) {
                    const float proposal = activate(g_act, clipped(candidate[k], g->clip));
                    h[k] = (1.0f - z[k]) * proposal + z[k] * h[k];
                }
                if (Y != NULL) memcpy(output_at(g, Y, t, d, b), h, (size_t)H * sizeof(float));
            }
            zero_tail(g, Y, length, d, b);
            if (Y_h != NULL) memcpy(Y_h + state, h, (size_t)H * sizeof(float));
        }
    }
}

void dcg_rnn_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                       const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                       const float *initial_h, const dcg_rnn_activation *activations, float *Y, float *Y_h, float *scratch) {
    const dcg_rnn_geometry *g = geometry;
    const int32_t H = g->hidden, I = g->input_size;
    float *restrict h = scratch;
    float *restrict pre = scratch + H;
    for (int32_t d = 0; d < g->directions; ++d) {
        const int64_t w_base = (int64_t)d * H * I, r_base = (int64_t)d * H * H, b_base = (int64_t)d * 2 * H;
        const dcg_rnn_activation *f_act = &activations[d];
        for (int32_t b = 0; b < g->batch; ++b) {
            const int32_t length = row_length(g, sequence_lens, b);
            const int64_t state = state_offset(g, d, b);
            load_state(initial_h, state, H, h);
            for (int32_t s = 0; s < length; ++s) {
                const int32_t t = runs_backwards(g, d) ? length - 1 - s : s;
                load_bias(B, b_base, H, 0, H, pre);
                add_product(W, w_base, input_at(g, X, t, b), H, I, pre);
                add_product(R, r_base, h, H, H, pre);
                for (int32_t k = 0; k < H; ++k) h[k] = activate(f_act, clipped(pre[k], g->clip));
                if (Y != NULL) memcpy(output_at(g, Y, t, d, b), h, (size_t)H * sizeof(float));
            }
            zero_tail(g, Y, length, d, b);
            if (Y_h != NULL) memcpy(Y_h + state, h, (size_t)H * sizeof(float));
        }
    }
}

void dcg_rnn_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                 const int32_t *sequence_lens, const float *initial_h, const dcg_rnn_activation *activations, float *Y,
                 float *Y_h, float *scratch) {
    const dcg_rnn_tensor w = float_tensor(W), r = float_tensor(R), b = float_tensor(B);
    dcg_rnn_mixed_f32(geometry, X, &w, &r, B == NULL ? NULL : &b, sequence_lens, initial_h, activations, Y, Y_h,
                      scratch);
}
