/*
 * deeploy_core: start-up code for running a test program on QEMU's mps2-an386 board (Cortex-M4 with FPU).
 *
 * Written for mps2_an386.ld.  The program talks to the host through Arm semihosting (newlib's librdimon,
 * linked with --specs=rdimon.specs): printf reaches QEMU's standard output and main's return value becomes
 * QEMU's exit status.  This file replaces the C library's own start files (-nostartfiles) because they ask the
 * debugger where the stack and heap are, and QEMU answers from its own idea of the board's RAM, not from this
 * layout; here every address comes from the linker script.
 *
 * The generated network code may use the FPU anywhere, so the FPU is switched on before any C library code
 * runs.  A fault (e.g. an unaligned or out-of-range access) prints its registers and ends the program with
 * DC_FAULT_STATUS instead of hanging until the caller's timeout.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* The exit status of a program stopped by a fault or an unexpected exception (emulated_targets.FAULT_STATUS). */
#define DC_FAULT_STATUS 70

/* System control block registers of the Armv7-M architecture. */
#define DC_REGISTER(address) (*(volatile uint32_t *)(address))
#define DC_CPACR DC_REGISTER(0xE000ED88u) /* coprocessor access: CP10 and CP11 are the FPU */
#define DC_CFSR DC_REGISTER(0xE000ED28u)  /* configurable fault status */
#define DC_HFSR DC_REGISTER(0xE000ED2Cu)  /* hard fault status */
#define DC_BFAR DC_REGISTER(0xE000ED38u)  /* bus fault address */

/* Semihosting operations (Arm's "Semihosting for AArch32 and AArch64", version 2). */
#define DC_SYS_WRITE0 0x04
#define DC_SYS_EXIT_EXTENDED 0x20
#define DC_ADP_STOPPED_APPLICATION_EXIT 0x20026

/* Symbols of mps2_an386.ld. */
extern char __dc_stack_bottom[], __dc_stack_top[];
extern char __dc_data_start[], __dc_data_end[], __dc_data_load[];
extern char __dc_bss_start[], __dc_bss_end[];
extern char __dc_heap_start[], __dc_heap_end[];
typedef void (*dc_function)(void);

int main(void);
void initialise_monitor_handles(void); /* librdimon: opens the semihosting console as stdin/stdout/stderr */
void __libc_init_array(void);          /* newlib: runs .preinit_array, _init and .init_array (see the script) */
void _init(void);
void _fini(void);
void *_sbrk(ptrdiff_t increment);

void dc_reset(void) __attribute__((noreturn));
void dc_fault(void) __attribute__((naked, noreturn));
void dc_fault_report(uint32_t stack, uint32_t pc, uint32_t lr) __attribute__((noreturn, used));
static void dc_start(void) __attribute__((noreturn, noinline));

/* The vector table: the core loads the stack pointer and the reset handler's address from here (at 0x0). */
struct dc_vector_table {
    char *stack_top;
    dc_function handlers[15];
};

__attribute__((section(".dc_vectors"), used)) static const struct dc_vector_table dc_vectors = {
    __dc_stack_top,
    {
        dc_reset,                        /* reset */
        dc_fault, dc_fault, dc_fault,    /* NMI, HardFault, MemManage */
        dc_fault, dc_fault, 0, 0, 0, 0,  /* BusFault, UsageFault, reserved */
        dc_fault, dc_fault, 0,           /* SVCall, DebugMonitor, reserved */
        dc_fault, dc_fault,              /* PendSV, SysTick */
    },
};

/* One semihosting call: the debugger (QEMU) handles BKPT 0xAB with the operation in r0 and its argument in r1. */
static uint32_t dc_semihost(uint32_t operation, const void *argument) {
    register uint32_t r0 __asm__("r0") = operation;
    register const void *r1 __asm__("r1") = argument;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

/* The start files' hooks around the constructor and destructor arrays, which newlib calls; nothing to do here. */
void _init(void) {}
void _fini(void) {}

/* Ends the emulation with `status` as QEMU's exit status without the C library (whose state a fault may have
 * broken); exit() reaches the same call through newlib's _exit. */
static void dc_exit(uint32_t status) __attribute__((noreturn));
static void dc_exit(uint32_t status) {
    const uint32_t block[2] = {DC_ADP_STOPPED_APPLICATION_EXIT, status};
    for (;;) dc_semihost(DC_SYS_EXIT_EXTENDED, block);
}

/* malloc's memory: from the end of .bss to the end of the data RAM (the stack is below .data, see the script). */
void *_sbrk(ptrdiff_t increment) {
    static char *current;
    if (current == NULL) current = __dc_heap_start;
    if (increment > __dc_heap_end - current || increment < __dc_heap_start - current) {
        errno = ENOMEM;
        return (void *)-1;
    }
    char *previous = current;
    current += increment;
    return previous;
}

void dc_reset(void) {
    /* Full access to CP10/CP11 before anything can execute a floating-point instruction. */
    DC_CPACR |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    for (char *to = __dc_data_start, *from = __dc_data_load; to < __dc_data_end;) *to++ = *from++;
    for (char *to = __dc_bss_start; to < __dc_bss_end;) *to++ = 0;
    dc_start();
}

/* Kept out of dc_reset so that no code the compiler schedules before the FPU is on can use it. */
static void dc_start(void) {
    initialise_monitor_handles();
    __libc_init_array();
    exit(main());
}

/* Every fault and unexpected exception.  The stack may be what failed (an overflow runs below the data RAM,
 * where writes are lost), so the stacked pc and lr are read first and the report runs on a fresh stack. */
void dc_fault(void) {
    __asm__ volatile(
        "tst lr, #4\n\t"
        "ite eq\n\t"
        "mrseq r0, msp\n\t"
        "mrsne r0, psp\n\t"
        "ldr r1, [r0, #24]\n\t" /* stacked pc */
        "ldr r2, [r0, #20]\n\t" /* stacked lr */
        "ldr r3, =__dc_stack_top\n\t"
        "mov sp, r3\n\t"
        "b dc_fault_report\n\t");
}

static char *dc_hex(char *to, const char *label, uint32_t value) {
    while (*label) *to++ = *label++;
    for (int shift = 28; shift >= 0; shift -= 4) *to++ = "0123456789abcdef"[(value >> shift) & 0xFu];
    return to;
}

static char *dc_text(char *to, const char *text) {
    while (*text) *to++ = *text++;
    return to;
}

/* stack: the stack pointer when the exception came; the exception number is in the IPSR's low bits. */
void dc_fault_report(uint32_t stack, uint32_t pc, uint32_t lr) {
    static char message[256];
    uint32_t ipsr;
    __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
    char *end = dc_hex(message, "emulated program stopped by exception 0x", ipsr & 0x1FFu);
    end = dc_hex(end, " at pc 0x", pc);
    end = dc_hex(end, " (lr 0x", lr);
    end = dc_hex(end, ", sp 0x", stack);
    end = dc_hex(end, ", CFSR 0x", DC_CFSR);
    end = dc_hex(end, ", HFSR 0x", DC_HFSR);
    end = dc_hex(end, ", BFAR 0x", DC_BFAR);
    end = dc_text(end, ")\n");
    if (stack < (uint32_t)(uintptr_t)__dc_stack_bottom)
        end = dc_text(end, "stack overflow: the stack is too small (link with -Wl,--defsym=__dc_stack_size=BYTES)\n");
    *end = '\0';
    dc_semihost(DC_SYS_WRITE0, message);
    dc_exit(DC_FAULT_STATUS);
}
