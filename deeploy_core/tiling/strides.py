"""Row-major element strides of a dense tensor.

The tile table's offsets, a share's place in its tile buffer and the cost
model's transfer shapes all count elements of the same C layout; one function
computes that layout's strides for all of them.  It lives on its own so that
code generation and the split among cores can both use it without importing
each other.
"""

from __future__ import annotations


def element_strides(shape: tuple[int, ...]) -> list[int]:
    """Elements between neighbours along each axis of a dense row-major tensor of ``shape`` (last axis: 1)."""
    strides, running = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = running
        running *= shape[axis]
    return strides
