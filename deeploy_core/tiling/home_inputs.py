"""Which inputs of a layer may be read in place from the home level instead of copied into the compute level.

A recurrent layer's gate weights (4 × hidden² floats for an LSTM: 256 KiB at
hidden 128) are read whole by every tile and are larger than a cluster's L1;
no split of the output shrinks them.  When nothing else fits, the tiler lets
the kernel read such a tensor where it is stored (L2), which PULP-like
clusters allow at a higher latency per access.  Only constants qualify: they
never change, so reading them in place cannot race a transfer, and they are
pinned to the home level (the outer-level placement does not move them to L3,
which the cores cannot address).
"""

from __future__ import annotations

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Extent


def whole_for_every_tile(extents: tuple[Extent, ...], shape: tuple[int, ...], out_shape: tuple[int, ...],
                         tiled_axes: tuple[int, ...]) -> bool:
    """Whether a tensor with these extents is read whole by every tile (its box never depends on the tile)."""
    if len(extents) != len(shape):
        return False
    for extent, dim in zip(extents, shape):
        if extent.axis is not None and extent.axis in tiled_axes:
            return False
        size = extent.full if extent.axis is None else extent.size_of(out_shape[extent.axis])
        if size != dim:
            return False
    return True


def readable_in_place(name: str, extents: tuple[Extent, ...], ctxt: NetworkContext, out_shape: tuple[int, ...],
                      tiled_axes: tuple[int, ...]) -> bool:
    """Whether input tensor ``name`` may stay in the home level: a constant every tile reads whole."""
    buffer = ctxt[name]
    return (buffer.is_constant and buffer.alias_of is None
            and whole_for_every_tile(extents, buffer.shape, out_shape, tiled_axes))
