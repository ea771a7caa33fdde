/*
 * deeploy_core: the profile mark of a Cortex-M4 program whose instructions are counted (instruction_counting.py).
 *
 * A network built with -DDC_PROFILE calls DeeployNetwork_profile_mark(k) before layer k and after the last
 * layer.  The instruction counter finds this function by its symbol and reads k from r0 when it is entered, so
 * the function only has to exist: it is kept out of line (noinline, used) and the empty asm with k as its input
 * stops the compiler from dropping the call or the argument.  A folder compiled with --prefix needs its own copy
 * under the prefixed name.
 */
#include <stdint.h>

void DeeployNetwork_profile_mark(uint32_t mark) __attribute__((noinline, used));

void DeeployNetwork_profile_mark(uint32_t mark) {
    __asm__ volatile("" : : "r"(mark) : "memory");
}
