/* pulp_emulator.h - extras of the host emulator of pulp_hal.h (statistics); not part of the HAL, a real SDK does not
 * provide them. */
#ifndef PULP_EMULATOR_H
#define PULP_EMULATOR_H

#include <stdint.h>
#include <stdio.h>

#include "pulp_hal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Memory levels: 0 = L1, 1 = L2, 2 = L3. */
#define PULP_LEVELS 3

/* The most DMA transfers that may be in flight (started, not yet waited for) at once, per engine: the cluster DMA
 * (L1 <-> L2) and the L3 controller (every transfer from or to L3). */
#define PULP_DMA_MAX_IN_FLIGHT 4096

/* Ids of transfers on the L3 controller have this bit set (the two engines count their ids separately). */
#define PULP_L3_DMA_ID_BIT 0x80000000u

/* Process exit codes of the emulator's checks. */
#define PULP_EXIT_OUT_OF_BOUNDS 86 /* access in a guard page before/after L1, L2 or L3 */
#define PULP_EXIT_BAD_WAIT 87      /* pulp_dma_wait on an id that is not in flight */
#define PULP_EXIT_DMA_TABLE 88     /* more than PULP_DMA_MAX_IN_FLIGHT transfers in flight */
#define PULP_EXIT_DMA_RANGE 89     /* DMA source or destination not inside one memory level */
#define PULP_EXIT_MISUSE 90        /* fork before pulp_init, nested fork, barrier not reached by every core */

typedef struct {
    uint64_t dma_bytes[PULP_LEVELS][PULP_LEVELS];     /* [src level][dst level], counted at the wait */
    uint64_t dma_transfers[PULP_LEVELS][PULP_LEVELS]; /* [src level][dst level] */
    /* [src level][dst level]: bytes of the transfers during whose flight (start to wait) some core computed, i.e.
     * called pulp_count_macs: what the schedule hid behind computation (double buffering) */
    uint64_t dma_overlapped_bytes[PULP_LEVELS][PULP_LEVELS];
    uint64_t macs[PULP_MAX_CORES];                    /* per core, from pulp_count_macs */
    uint64_t barrier_waits;                           /* calls of pulp_barrier (one per core and barrier) */
    uint64_t forks;                                   /* calls of pulp_cluster_fork */
} pulp_stats;

/* Copies the statistics gathered since pulp_init or pulp_reset_stats (call it outside a fork). */
void pulp_get_stats(pulp_stats *out);
/* Sets all statistics to zero. */
void pulp_reset_stats(void);
/* Writes the statistics as one JSON object on one line:
 * {"dma_bytes": {"L2->L1": n, ...only non-zero pairs}, "dma_transfers": {...}, "dma_overlapped_bytes": {...},
 *  "macs": [one entry per core], "barrier_waits": n, "forks": n} */
void pulp_print_stats(FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* PULP_EMULATOR_H */
