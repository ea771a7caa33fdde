"""The alignment of the blocks a tiler places in the compute level.

The hierarchy's alignment (16 bytes by default) suits the home arena, whose
buffers host SIMD loads may touch.  Tile buffers need only what ISO C asks of
the types read through them: a float or int32 tile 4 bytes, an int64 or
double tile 8; tables are int32 rows; a kernel's scratch is cast to any
scalar type (8 bytes at most).  Aligning every L1 block to 16 bytes costs
up to 15 bytes per buffer, which decides whether the smallest tiles fit a
few hundred bytes of L1 (Deeploy's Siracusa tests run a float ReLU
double-buffered in 20 bytes: four 4-byte buffers).
"""

from __future__ import annotations

from collections.abc import Sequence

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer

WORD_BYTES = 4
"""The least alignment: a table row's int32 and a 32-bit core's word."""

SCRATCH_ALIGNMENT = 8
"""Scratch of any kernel: the widest scalar type (int64, double) it may be cast to."""


def tile_alignment(layers: Sequence[Layer], ctxt: NetworkContext, ceiling: int) -> int:
    """The widest element type any of ``layers`` moves through the compute level, at least a word, at most ``ceiling``."""
    widest = WORD_BYTES
    for layer in layers:
        for tensor in [*layer.node.inputs, *layer.node.outputs]:
            if tensor.name and tensor.name in ctxt:
                widest = max(widest, ctxt[tensor.name].dtype.size)
        if layer.binding.template.transient_buffers(layer.representation):
            widest = max(widest, SCRATCH_ALIGNMENT)
    aligned = 1
    while aligned < widest:
        aligned *= 2
    return min(aligned, ceiling)
