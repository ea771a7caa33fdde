/* gcc 12.2 (x86-64) -O2/-O3 wrong code in a program with no undefined behaviour: a function that stores is
 * found "pure" and its calls are deleted (deeploy_core issue 29; docs/correctness.rst explains the chain).
 * Build: gcc -std=c99 -O2 gcc12_pure_layer.c && ./a.out   prints 0 instead of 3328; right at -O0, -O1, -Os, with
 * clang, with -O2 -fno-ipa-icf, -fno-ivopts or -fno-delete-null-pointer-checks; -fno-strict-aliasing does not help. */
#include <stdint.h>
#include <stdio.h>

/* One block holding tensors of two element types, each at an offset of its own (a network's arena). */
static union block { int8_t i8[57344]; int32_t i32[14336]; } memory;
static union block *view; /* set at run time, as an arena base is */
static const int16_t multiplier[1] = {16384};

#define REQUANTISE_BODY                                                                                   \
    for (int32_t c = 0; c < 64; ++c)                                                                      \
        for (int32_t i = 0; i < 128; ++i) {                                                               \
            int64_t t = ((int64_t)view->i32[c * 128 + i] * multiplier[0] + 8192) >> 14;                   \
            t = t < -128 ? -128 : (t > 127 ? 127 : t);                                                    \
            view->i8[32768 + c * 128 + i] = (int8_t)t;                                                    \
        }

static void requantise(void) { REQUANTISE_BODY }       /* int32 at byte 0 -> int8 at byte 32768 */
static void requantise_again(void) { REQUANTISE_BODY } /* the same body: identical-code folding merges them */

static void run(void) {
    requantise();
    for (int32_t i = 0; i < 8192; ++i) view->i32[i] = view->i8[32768 + i] + 1;
    requantise_again();
}

int main(void) {
    view = &memory;
    for (int32_t i = 0; i < 8192; ++i) view->i32[i] = i % 200 - 100;
    run();
    long sum = 0;
    for (int32_t i = 0; i < 8192; ++i) sum += view->i8[32768 + i];
    printf("%ld\n", sum); /* 3328 */
    return sum != 3328;
}
