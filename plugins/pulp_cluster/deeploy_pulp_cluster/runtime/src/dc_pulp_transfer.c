#include "dc_pulp_transfer.h"

#include <stdio.h>
#include <stdlib.h>

#include "pulp_hal.h"

/* Groups in flight at once: a layer has at most (inputs + outputs) x 2 slots pending; 64 is ample. */
#define DC_PULP_GROUPS 64
/* DMA ids of one group: a box needs one 3-D transfer per index of its outer axes. */
#define DC_PULP_GROUP_IDS 4096

typedef struct {
    int32_t used;
    int32_t count;
    pulp_dma_id ids[DC_PULP_GROUP_IDS];
} dc_pulp_group;

static dc_pulp_group groups[DC_PULP_GROUPS];

static void fail(const char *what) {
    fprintf(stderr, "dc_pulp_transfer: %s\n", what);
    exit(88);
}

static int32_t open_group(void) {
    for (int32_t g = 0; g < DC_PULP_GROUPS; ++g) {
        if (!groups[g].used) {
            groups[g].used = 1;
            groups[g].count = 0;
            return g;
        }
    }
    fail("too many box transfers in flight");
    return -1;
}

static void add(int32_t group, pulp_dma_id id) {
    if (groups[group].count == DC_PULP_GROUP_IDS) fail("a box needs more DMA transfers than a group holds");
    groups[group].ids[groups[group].count++] = id;
}

/* Drops unit axes and merges neighbours that are contiguous in the tensor (stride[a] == extent[a+1] *
 * stride[a+1]; the tile side is dense, so that is the only condition), so that boxes need as few and as long DMA
 * rows as possible; the innermost axis is counted in bytes. Returns the new rank (at least 1). */
static int32_t simplify(int32_t element_bytes, int32_t rank, const int32_t *box, const int32_t *strides,
                        int64_t *extent, int64_t *stride_bytes) {
    int32_t out = 0;
    for (int32_t axis = 0; axis < rank; ++axis) {
        if (box[axis] == 1) continue;
        extent[out] = box[axis];
        stride_bytes[out] = (int64_t)strides[axis] * element_bytes;
        ++out;
    }
    if (out == 0 || stride_bytes[out - 1] != element_bytes) {
        /* innermost axis is not contiguous (or there is none): add a unit-stride element axis */
        extent[out] = 1;
        stride_bytes[out] = element_bytes;
        ++out;
    }
    /* the innermost axis becomes bytes */
    extent[out - 1] *= stride_bytes[out - 1];
    stride_bytes[out - 1] = 1;
    int32_t merged = out - 1;
    for (int32_t axis = out - 2; axis >= 0; --axis) {
        if (stride_bytes[axis] == extent[merged] * stride_bytes[merged]) {
            extent[merged] *= extent[axis];
        } else {
            --merged;
            extent[merged] = extent[axis];
            stride_bytes[merged] = stride_bytes[axis];
        }
    }
    int32_t count = out - merged;
    for (int32_t i = 0; i < count; ++i) {
        extent[i] = extent[merged + i];
        stride_bytes[i] = stride_bytes[merged + i];
    }
    return count;
}

static dc_pulp_future copy_box(uint8_t *dense, uint8_t *strided, int32_t to_dense, int32_t element_bytes,
                               int32_t rank, const int32_t *box, const int32_t *strides) {
    int64_t extent[9], stride[9];
    for (int32_t axis = 0; axis < rank; ++axis) {
        if (box[axis] == 0) return 0;
    }
    if (rank > 8) fail("boxes of more than 8 axes are not supported");
    int32_t axes = simplify(element_bytes, rank, box, strides, extent, stride);
    /* the last (up to) three axes go to one 3-D transfer; the outer ones are looped over */
    int32_t inner = axes < 3 ? axes : 3;
    int32_t outer = axes - inner;
    int64_t row_bytes = extent[axes - 1];
    int64_t rows = inner >= 2 ? extent[axes - 2] : 1, planes = inner >= 3 ? extent[axes - 3] : 1;
    int64_t row_stride = inner >= 2 ? stride[axes - 2] : row_bytes;
    int64_t plane_stride = inner >= 3 ? stride[axes - 3] : rows * row_stride;
    int64_t dense_block = row_bytes * rows * planes;
    int64_t index[8] = {0};
    int32_t group = open_group();
    for (;;) {
        int64_t offset = 0;
        for (int32_t axis = 0; axis < outer; ++axis) offset += index[axis] * stride[axis];
        uint8_t *far = strided + offset;
        pulp_dma_id id;
        if (to_dense) {
            id = pulp_dma_start_3d(dense, far, (uint32_t)row_bytes, (uint32_t)rows, (uint32_t)planes,
                                   (uint32_t)row_bytes, (uint32_t)row_stride, (uint32_t)(row_bytes * rows),
                                   (uint32_t)plane_stride);
        } else {
            id = pulp_dma_start_3d(far, dense, (uint32_t)row_bytes, (uint32_t)rows, (uint32_t)planes,
                                   (uint32_t)row_stride, (uint32_t)row_bytes, (uint32_t)plane_stride,
                                   (uint32_t)(row_bytes * rows));
        }
        add(group, id);
        dense += dense_block;
        int32_t axis = outer - 1;
        while (axis >= 0 && ++index[axis] == extent[axis]) index[axis--] = 0;
        if (axis < 0) break;
    }
    return group + 1;
}

dc_pulp_future dc_pulp_copy_to_tile(void *tile, const void *tensor, int32_t element_bytes, int32_t rank,
                                    const int32_t *box, const int32_t *strides) {
    return copy_box((uint8_t *)tile, (uint8_t *)(uintptr_t)tensor, 1, element_bytes, rank, box, strides);
}

dc_pulp_future dc_pulp_copy_from_tile(void *tensor, const void *tile, int32_t element_bytes, int32_t rank,
                                      const int32_t *box, const int32_t *strides) {
    return copy_box((uint8_t *)(uintptr_t)tile, (uint8_t *)tensor, 0, element_bytes, rank, box, strides);
}

void dc_pulp_wait(dc_pulp_future *future) {
    if (*future == 0) return;
    dc_pulp_group *group = &groups[*future - 1];
    for (int32_t i = 0; i < group->count; ++i) pulp_dma_wait(group->ids[i]);
    group->used = 0;
    *future = 0;
}
