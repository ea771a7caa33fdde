/*
 * deeploy_core generic C platform: recurrent layers (ONNX LSTM, GRU and RNN), float32.
 *
 * Why a header of its own: the recurrent kernels carry a geometry record and an activation code table that no
 * other kernel needs, so they stay out of dcg_kernels.h.
 *
 * Semantics are ONNX's (opset 7..22):
 *  - Gate order: LSTM i, o, f, c (W [dirs, 4H, I], R [dirs, 4H, H], B [dirs, 8H] = Wb then Rb, P [dirs, 3H] = i, o, f);
 *    GRU z, r, h (W [dirs, 3H, I], R [dirs, 3H, H], B [dirs, 6H]); RNN one gate (W [dirs, H, I], R [dirs, H, H],
 *    B [dirs, 2H]).
 *  - Absent optional inputs are NULL (B = zeros, sequence_lens = full length, initial states = zeros, P = zeros);
 *    absent outputs are NULL.
 *  - Batch rows are independent: each (direction, row) runs its whole sequence with state in `scratch`, so the
 *    scratch size does not grow with the batch: LSTM 6 * hidden floats, GRU 5 * hidden floats, RNN 2 * hidden.
 *  - A row with sequence_lens[b] = L < seq_length runs steps 0..L-1 (the reverse direction starts at L-1), writes
 *    zeros into Y at steps L.., and its Y_h / Y_c are the state after its last valid step.
 *  - clip > 0 bounds every gate's pre-activation to [-clip, clip] (peephole terms included); 0 means no clip.
 */
#ifndef DCG_RECURRENT_H
#define DCG_RECURRENT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* layout 0: X [seq, batch, input], Y [seq, dirs, batch, hidden], states [dirs, batch, hidden];
 * layout 1: X [batch, seq, input], Y [batch, seq, dirs, hidden], states [batch, dirs, hidden].
 * directions is 1 or 2; with one direction, reverse = 1 runs it backwards (bidirectional: direction 1 is reverse). */
typedef struct {
    int32_t seq_length;
    int32_t batch;
    int32_t input_size;
    int32_t hidden;
    int32_t directions;
    int32_t reverse;
    int32_t layout;
    float clip;
} dcg_rnn_geometry;

/* A parameter tensor (W, R, B or P): float values, or int8 values with the per-tensor scale and zero point of the
 * DequantizeLinear that produced it in a QDQ model (quantised weights stay int8 constants; each element is
 * dequantised where it is used, as (float)(q - zero_point) * scale, exactly ONNX Runtime's DequantizeLinear). */
typedef struct {
    const float *values;
    const int8_t *quantized;
    float scale;
    int32_t zero_point;
} dcg_rnn_tensor;

/* One activation function of a gate: its code and its alpha/beta (ignored by the functions without parameters).
 * The `activations` arrays list LSTM: f, g, h per direction; GRU: f, g; RNN: f.
 * Affine alpha*x + beta; LeakyRelu x >= 0 ? x : alpha*x; ThresholdedRelu x > alpha ? x : 0;
 * ScaledTanh alpha*tanh(beta*x); HardSigmoid min(max(alpha*x + beta, 0), 1); Elu x >= 0 ? x : alpha*(exp(x) - 1). */
enum {
    DCG_RNN_SIGMOID = 0,
    DCG_RNN_TANH = 1,
    DCG_RNN_RELU = 2,
    DCG_RNN_SOFTSIGN = 3,
    DCG_RNN_SOFTPLUS = 4,
    DCG_RNN_AFFINE = 5,
    DCG_RNN_LEAKY_RELU = 6,
    DCG_RNN_THRESHOLDED_RELU = 7,
    DCG_RNN_SCALED_TANH = 8,
    DCG_RNN_HARD_SIGMOID = 9,
    DCG_RNN_ELU = 10
};

typedef struct {
    int32_t code;
    float alpha;
    float beta;
} dcg_rnn_activation;

/* input_forget = 1 couples the forget gate to the input gate (f = 1 - i). */
void dcg_lstm_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                  const int32_t *sequence_lens, const float *initial_h, const float *initial_c, const float *P,
                  int32_t input_forget, const dcg_rnn_activation *activations, float *Y, float *Y_h, float *Y_c,
                  float *scratch);

/* dcg_lstm_f32 with each parameter tensor float or int8 (NULL for an absent B or P). */
void dcg_lstm_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                        const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                        const float *initial_h, const float *initial_c, const dcg_rnn_tensor *P, int32_t input_forget,
                        const dcg_rnn_activation *activations, float *Y, float *Y_h, float *Y_c, float *scratch);

/* linear_before_reset = 1 applies the reset gate after the recurrent product of the h gate:
 * h~ = g(W_h x + Wb_h + r * (R_h h + Rb_h)); otherwise h~ = g(W_h x + R_h (r * h) + Wb_h + Rb_h). */
void dcg_gru_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                 const int32_t *sequence_lens, const float *initial_h, int32_t linear_before_reset,
                 const dcg_rnn_activation *activations, float *Y, float *Y_h, float *scratch);

/* dcg_gru_f32 with each parameter tensor float or int8 (NULL for an absent B). */
void dcg_gru_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                       const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                       const float *initial_h, int32_t linear_before_reset, const dcg_rnn_activation *activations, float *Y,
                       float *Y_h, float *scratch);

/* Simple RNN: H_t = f(W x_t + R H_t-1 + Wb + Rb); each parameter tensor float or int8 (NULL for an absent B). */
void dcg_rnn_mixed_f32(const dcg_rnn_geometry *geometry, const float *X, const dcg_rnn_tensor *W,
                       const dcg_rnn_tensor *R, const dcg_rnn_tensor *B, const int32_t *sequence_lens,
                       const float *initial_h, const dcg_rnn_activation *activations, float *Y, float *Y_h, float *scratch);

/* dcg_rnn_mixed_f32 with float parameters. */
void dcg_rnn_f32(const dcg_rnn_geometry *geometry, const float *X, const float *W, const float *R, const float *B,
                 const int32_t *sequence_lens, const float *initial_h, const dcg_rnn_activation *activations, float *Y,
                 float *Y_h, float *scratch);

#ifdef __cplusplus
}
#endif

#endif /* DCG_RECURRENT_H */
