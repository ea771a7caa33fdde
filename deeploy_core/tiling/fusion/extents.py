"""Tile extents composed back through a chain of layers (the receptive field of a fused pattern).

A layer's :class:`~deeploy_core.tiling.geometry.Extent` gives an input axis's
size as ``min(full, scale · t + offset)`` of one of *its own* output axes.  In
a fused pattern that output is the next layer's input, whose size is in turn an
extent of the next layer's output axis, and so on to the pattern's last layer,
whose output tile sizes are the CP model's variables.  Composing the affine
steps (each clipped to its tensor) gives every tensor of the pattern an extent
in the last layer's axes: convolution halos grow by ``(k − 1) · d`` per layer
and are multiplied by the strides after them.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.tiling.geometry import Extent


@dataclass(frozen=True)
class ChainedExtent(Extent):
    """An extent reached through ``inner`` steps first: each ``(scale, offset, full)`` maps a size to the next."""

    inner: tuple[tuple[int, int, int], ...] = ()

    def size_of(self, tile_size: int) -> int:
        if self.axis is None:
            return self.full
        size = tile_size
        for scale, offset, full in self.inner:
            size = min(full, scale * size + offset)
        return min(self.full, self.scale * size + self.offset)


def steps_of(extent: Extent) -> tuple[tuple[int, int, int], ...]:
    """The affine steps of ``extent`` from the pattern's axis to its own size, innermost first."""
    inner = extent.inner if isinstance(extent, ChainedExtent) else ()
    return (*inner, (extent.scale, extent.offset, extent.full))


def compose(extent: Extent, outer: tuple[Extent, ...]) -> Extent:
    """``extent`` (in a producer's output axes) re-expressed in the pattern's axes.

    ``outer[a]`` is the producer's output axis ``a`` as an extent of the
    pattern's axes (the consumer's view of the intermediate tensor).  An axis
    the consumer reads whole stays a constant.
    """
    if extent.axis is None:
        return extent
    source = outer[extent.axis]
    if source.axis is None:
        return Extent(extent.size_of(source.full))
    return ChainedExtent(extent.full, source.axis, extent.scale, extent.offset, inner=steps_of(source))
