#include "dcg_transfer.h"

#include <string.h>

/* Walks the box in C order; the innermost axis is one memcpy when it is contiguous in the tensor. */
static int32_t copy_box(uint8_t *dense, uint8_t *strided, int32_t to_dense, int32_t element_bytes, int32_t rank,
                        const int32_t *box, const int32_t *strides) {
    int32_t index[8] = {0};
    if (rank <= 0) {
        if (to_dense) memcpy(dense, strided, (size_t)element_bytes);
        else memcpy(strided, dense, (size_t)element_bytes);
        return 1;
    }
    for (int32_t axis = 0; axis < rank; ++axis) {
        if (box[axis] == 0) return 0;
    }
    const int32_t inner = box[rank - 1];
    const int32_t contiguous = strides[rank - 1] == 1;
    for (;;) {
        int64_t offset = 0;
        for (int32_t axis = 0; axis < rank - 1; ++axis) offset += (int64_t)index[axis] * strides[axis];
        uint8_t *row = strided + offset * element_bytes;
        if (contiguous) {
            if (to_dense) memcpy(dense, row, (size_t)inner * (size_t)element_bytes);
            else memcpy(row, dense, (size_t)inner * (size_t)element_bytes);
            dense += (size_t)inner * (size_t)element_bytes;
        } else {
            for (int32_t i = 0; i < inner; ++i) {
                uint8_t *element = row + (int64_t)i * strides[rank - 1] * element_bytes;
                if (to_dense) memcpy(dense, element, (size_t)element_bytes);
                else memcpy(element, dense, (size_t)element_bytes);
                dense += element_bytes;
            }
        }
        int32_t axis = rank - 2;
        while (axis >= 0 && ++index[axis] == box[axis]) index[axis--] = 0;
        if (axis < 0) break;
    }
    return 1;
}

int32_t dcg_copy_to_tile(void *tile, const void *tensor, int32_t element_bytes, int32_t rank, const int32_t *box,
                         const int32_t *strides) {
    return copy_box((uint8_t *)tile, (uint8_t *)(uintptr_t)tensor, 1, element_bytes, rank, box, strides);
}

int32_t dcg_copy_from_tile(void *tensor, const void *tile, int32_t element_bytes, int32_t rank, const int32_t *box,
                           const int32_t *strides) {
    return copy_box((uint8_t *)(uintptr_t)tile, (uint8_t *)tensor, 0, element_bytes, rank, box, strides);
}
