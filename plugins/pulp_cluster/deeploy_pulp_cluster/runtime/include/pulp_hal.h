/* pulp_hal.h - the hardware abstraction layer that generated code for a PULP-like cluster is written against.
 *
 * The cluster: up to PULP_MAX_CORES cores sharing a small L1 scratchpad, an L2 memory next to it, an optional large
 * L3 memory, and a DMA engine that moves (up to 3-D strided) blocks between any two of them. Generated code only
 * includes this header; a real SDK implements it on the chip, and src/pulp_emulator.c implements it on a Linux host
 * (pthreads for cores, mmap'd memories with guard pages, DMA copies deferred to the wait) so that tiled, parallel,
 * DMA-driven code can be validated bit-exactly on a PC.
 *
 * Conventions every implementation must follow:
 *  - pulp_init is called once before anything else (except the size/base queries, which return 0/NULL before it).
 *  - Only the thread that called pulp_init calls pulp_cluster_fork; forks do not nest.
 *  - A DMA destination may only be read (and its source only written) after pulp_dma_wait of that transfer; a
 *    transfer may be started by one core and waited for by another, once.
 *
 * What a port to a real SoC must provide (every function below; the generated code calls nothing else):
 *  - start-up:     pulp_init, pulp_shutdown
 *  - L1 allocation and the other memories: pulp_l1_base/size, pulp_l2_base/size, pulp_l3_base/size (the regions
 *                  reserved for generated code; it places its tiles and arena inside them itself)
 *  - cores:        pulp_cluster_fork, pulp_core_id, pulp_num_cores, pulp_chunk (exactly the split documented)
 *  - barriers:     pulp_barrier
 *  - DMA:          pulp_dma_start_1d/2d/3d, pulp_dma_wait
 *  - profiling:    pulp_count_macs (may do nothing)
 * In an output folder of `deeploy-core compile` this header is runtime/include/pulp_hal.h; runtime/host holds the
 * host emulation, which a firmware build replaces with the SDK's implementation.
 *
 * C99, depends on <stdint.h> and <stddef.h> only. */
#ifndef PULP_HAL_H
#define PULP_HAL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The largest number of cores a cluster may have. */
#define PULP_MAX_CORES 16

/* Sizes (bytes) of the three memory levels and the number of cores the program runs with. */
typedef struct {
    uint32_t l1_bytes;
    uint32_t l2_bytes;
    uint32_t l3_bytes;
    uint32_t cores;
} pulp_config;

/* Brings the cluster up: makes l1_bytes of L1, l2_bytes of L2 and l3_bytes of L3 usable and `cores` cores
 * available to pulp_cluster_fork. Returns 0 on success, -1 if config is NULL, cores is not in 1..PULP_MAX_CORES or
 * the memories cannot be provided. A second call with an identical config is a no-op returning 0; a different config
 * first does what pulp_shutdown does and then initialises anew (memory contents are lost).
 * SDK: power up / configure the cluster, reserve the memories (e.g. check they fit the chip's L1/L2/L3). */
int pulp_init(const pulp_config *config);

/* Releases everything pulp_init set up; transfers still in flight are dropped. Base pointers become invalid.
 * SDK: may power the cluster down, or do nothing. */
void pulp_shutdown(void);

/* Base (16-byte aligned) and size (the configured bytes) of each memory level; NULL/0 before pulp_init.
 * SDK: the start of the region of L1 / L2 / L3 reserved for generated code and its size. */
uint8_t *pulp_l1_base(void);
uint32_t pulp_l1_size(void);
uint8_t *pulp_l2_base(void);
uint32_t pulp_l2_size(void);
uint8_t *pulp_l3_base(void);
uint32_t pulp_l3_size(void);

/* The body of a parallel region, run once on every core. */
typedef void (*pulp_task)(void *arg);

/* Runs task(arg) on every one of the configured cores (core 0 may be the calling thread) and returns when all of
 * them have returned (fork + join). Everything written before the fork is visible to every core, everything the
 * cores wrote is visible after it returns.
 * SDK: dispatch the task to the cluster's cores (e.g. pi_cluster_send_task + team fork) and wait for the end. */
void pulp_cluster_fork(pulp_task task, void *arg);

/* The id of the calling core, 0..cores-1, inside a fork; 0 outside one.
 * SDK: the core id register (e.g. pi_core_id / rt_core_id). */
uint32_t pulp_core_id(void);

/* The number of cores the cluster was initialised with (the cores of every fork).
 * SDK: the configured team size. */
uint32_t pulp_num_cores(void);

/* Waits until every core of the running fork has reached the barrier; everything written before it by any core is
 * visible to all cores after it. Outside a fork it returns at once. Must be reached by all cores the same number of
 * times. SDK: the hardware event-unit barrier (e.g. pi_cl_team_barrier). */
void pulp_barrier(void);

/* This core's share of [0, total): the range [*begin, *end). Shares are contiguous and in core order; the first
 * (total % cores) cores get one element more. Outside a fork the caller is the only core and gets [0, total).
 * SDK: plain arithmetic on pulp_core_id()/pulp_num_cores(); any implementation must give exactly this split. */
void pulp_chunk(uint32_t total, uint32_t *begin, uint32_t *end);

/* Handle of a DMA transfer in flight (never 0). */
typedef uint32_t pulp_dma_id;

/* Starts copying `bytes` bytes from src to dst; returns at once. Source and destination each lie completely inside
 * one memory level (any pair of levels, including the same one) and do not overlap.
 * SDK: program the cluster DMA (L1<->L2) or the L3 controller / micro-DMA (L3<->L2) and return its transfer id. */
pulp_dma_id pulp_dma_start_1d(void *dst, const void *src, uint32_t bytes);

/* Starts a 2-D copy: `rows` rows of `row_bytes` bytes; row r is read at src + r*src_row_stride and written to
 * dst + r*dst_row_stride (strides in bytes). SDK: a 2-D DMA transfer (or one 1-D transfer per row). */
pulp_dma_id pulp_dma_start_2d(void *dst, const void *src, uint32_t row_bytes, uint32_t rows, uint32_t dst_row_stride,
                              uint32_t src_row_stride);

/* Starts a 3-D copy: `planes` planes of `rows` rows of `row_bytes` bytes; row r of plane p is read at
 * src + p*src_plane_stride + r*src_row_stride and written to dst + p*dst_plane_stride + r*dst_row_stride (bytes).
 * SDK: a 3-D DMA transfer, or 2-D transfers per plane under one id. */
pulp_dma_id pulp_dma_start_3d(void *dst, const void *src, uint32_t row_bytes, uint32_t rows, uint32_t planes,
                              uint32_t dst_row_stride, uint32_t src_row_stride, uint32_t dst_plane_stride,
                              uint32_t src_plane_stride);

/* Blocks until the transfer `id` has completed; afterwards its destination holds the data. This is the only way the
 * destination may be read. Every started transfer is waited for exactly once, by any core.
 * SDK: wait on the DMA / micro-DMA completion of the transfer. */
void pulp_dma_wait(pulp_dma_id id);

/* Reports that the calling core did `macs` multiply-accumulates (input to the cost model).
 * SDK: may do nothing, or add to a performance counter. */
void pulp_count_macs(uint64_t macs);

#ifdef __cplusplus
}
#endif

#endif /* PULP_HAL_H */
