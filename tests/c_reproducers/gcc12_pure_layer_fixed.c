/* gcc12_pure_layer.c as deeploy_core now writes it: each tensor a pointer variable of its own, set at run time.
 * IVOPTs never expresses one object's address through another's, so no null-based address is built and the
 * layer functions keep their stores: 3328 at every level, with every compiler. */
#include <stdint.h>
#include <stdio.h>

static union block { int8_t i8[57344]; int32_t i32[14336]; } memory;
static union block *view;
static int32_t *accumulator; /* int32 tensor at byte 0 */
static int8_t *requantised;  /* int8 tensor at byte 32768 */
static const int16_t multiplier[1] = {16384};

#define REQUANTISE_BODY                                                                                   \
    for (int32_t c = 0; c < 64; ++c)                                                                      \
        for (int32_t i = 0; i < 128; ++i) {                                                               \
            int64_t t = ((int64_t)accumulator[c * 128 + i] * multiplier[0] + 8192) >> 14;                 \
            t = t < -128 ? -128 : (t > 127 ? 127 : t);                                                    \
            requantised[c * 128 + i] = (int8_t)t;                                                         \
        }

static void requantise(void) { REQUANTISE_BODY }
static void requantise_again(void) { REQUANTISE_BODY }

static void run(void) {
    requantise();
    for (int32_t i = 0; i < 8192; ++i) accumulator[i] = requantised[i] + 1;
    requantise_again();
}

int main(void) {
    view = &memory;
    accumulator = &view->i32[0];
    requantised = &view->i8[32768];
    for (int32_t i = 0; i < 8192; ++i) accumulator[i] = i % 200 - 100;
    run();
    long sum = 0;
    for (int32_t i = 0; i < 8192; ++i) sum += requantised[i];
    printf("%ld\n", sum); /* 3328 */
    return sum != 3328;
}
