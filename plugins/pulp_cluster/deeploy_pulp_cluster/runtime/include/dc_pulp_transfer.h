/* Tile transfers of generated code on a PULP-like cluster: an N-dimensional box of a tensor in L2 (or L3) moved to
 * or from a dense tile buffer in L1 with the cluster DMA.
 *
 * The compiler describes a box by its shape and the tensor's element strides (up to 8 axes). The DMA engine moves
 * at most three-dimensional strided blocks, so a box is cut into as few 3-D transfers as its layout allows (axes
 * that are contiguous in the tensor are merged first). All transfers of one box form a group; its handle is what
 * the generated code waits on, and waiting is the only way it may read the destination. */
#ifndef DC_PULP_TRANSFER_H
#define DC_PULP_TRANSFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A group handle: 0 means "nothing in flight" (waiting on it is free). */
typedef int32_t dc_pulp_future;

dc_pulp_future dc_pulp_copy_to_tile(void *tile, const void *tensor, int32_t element_bytes, int32_t rank,
                                    const int32_t *box, const int32_t *strides);
dc_pulp_future dc_pulp_copy_from_tile(void *tensor, const void *tile, int32_t element_bytes, int32_t rank,
                                      const int32_t *box, const int32_t *strides);
/* Waits for every transfer of the group and clears the handle, so a handle is never waited on twice. */
void dc_pulp_wait(dc_pulp_future *future);

#ifdef __cplusplus
}
#endif

#endif
