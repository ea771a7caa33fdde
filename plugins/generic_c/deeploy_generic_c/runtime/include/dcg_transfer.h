/* Tile transfers of the generic C platform's tiled mode: synchronous box copies.
 *
 * A box is a dense block of `rank` axes (`box[i]` elements each) inside a
 * tensor whose axes have element strides `strides[i]`.  The tile side is
 * always dense.  Copies complete before returning; the returned future is a
 * transfer count, and waiting on it is free. */
#ifndef DCG_TRANSFER_H
#define DCG_TRANSFER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int32_t dcg_copy_to_tile(void *tile, const void *tensor, int32_t element_bytes, int32_t rank, const int32_t *box,
                         const int32_t *strides);
int32_t dcg_copy_from_tile(void *tensor, const void *tile, int32_t element_bytes, int32_t rank, const int32_t *box,
                           const int32_t *strides);

static inline void dcg_transfer_wait(int32_t future) { (void)future; }

#ifdef __cplusplus
}
#endif

#endif
