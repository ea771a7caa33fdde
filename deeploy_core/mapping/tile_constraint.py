"""The interface of a kernel's tile geometry, and the fallback that keeps a layer whole.

A mapper (:class:`~deeploy_core.mapping.binding.NodeMapper`) may carry the
geometry of its kernel, so the interface lives with the mapping; the
constraints of the ONNX ops (sliding windows, matrix products, ...) and the
tiler that solves them build on it in :mod:`deeploy_core.tiling.geometry`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext

Range = tuple[int, int]
Box = tuple[Range, ...]


@dataclass(frozen=True)
class Extent:
    """The size of one input axis as a function of the output tile sizes: ``min(full, scale · t[axis] + offset)``.

    ``axis`` None means the input axis is never cut (size ``full``).
    """

    full: int
    axis: int | None = None
    scale: int = 1
    offset: int = 0

    def size(self, tile: dict[int, int]) -> int:
        if self.axis is None:
            return self.full
        return self.size_of(tile[self.axis])

    def size_of(self, tile_size: int) -> int:
        """The extent when the output axis it follows is ``tile_size`` long (``full`` if it follows none)."""
        if self.axis is None:
            return self.full
        return min(self.full, self.scale * tile_size + self.offset)


def full_box(shape: tuple[int, ...]) -> Box:
    return tuple((0, dim) for dim in shape)


class TileConstraint:
    """Untiled: the layer runs as one tile holding whole tensors (the fallback for every op)."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        """Axes of output 0 that may be cut."""
        return ()

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        """Why output axis ``axis`` (not in :meth:`tiled_axes`) stays whole: the report and the diagnosis say it."""
        if type(self) is TileConstraint:
            return "no tile constraint describes the op, so it runs as one tile holding its whole tensors"
        return f"the kernel's tile constraint ({type(self).__name__}) keeps it whole"

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        """The box each input reads for output box ``out`` (None for absent inputs)."""
        return [full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        """Upper bounds of the input box sizes as affine functions of the output tile sizes."""
        return [tuple(Extent(dim) for dim in ctxt[t.name].shape) if t.name else None for t in node.inputs]

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        """The node attributes of the tile's kernel."""
        return dict(node.attrs)

    @staticmethod
    def _out_shape(node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return ctxt[node.outputs[0].name].shape
