"""Tile (constant repeats) and Expand (numpy broadcast to the output's static shape) for every element type.

Both are a strided copy (:func:`deeploy_generic_c.kernels.strided.strided_copy`):
Expand reads broadcast axes with stride 0; Tile walks the output as
``[r0, d0, r1, d1, …]`` (repeat, then input axis) and reads the input with
strides ``[0, s0, 0, s1, …]``, which is exactly the tiled layout in C order.

On a cluster both are tiled along every output axis (their outputs are often
far larger than their inputs, so the untiled layer would not fit a small L1):
an Expand tile reads the same box of the input, broadcast axes whole; a Tile
tile reads the input whole along repeated axes, starting at the tile's first
output position modulo the axis (the ``dcg_tile_start`` attribute the tile
constraint gives the tile's kernel).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Box, DataType, Elementwise, Extent, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, TileConstraint,
)
from deeploy_generic_c.parsing.common import CALL, broadcast_strides
from deeploy_generic_c.parsing.indexing import require_same_type
from deeploy_generic_c.kernels.strided import (
    block,
    counters,
    dense_strides,
    nested_loops,
    offset,
    strided_copy,
    typed_views,
)

TILE_START = "dcg_tile_start"
"""Attribute of a Tile tile's kernel: each axis' first output position (0 for the untiled layer)."""


def _full(shape: tuple[int, ...]) -> Box:
    return tuple((0, size) for size in shape)


class TileTiling(TileConstraint):
    """Tile on a cluster: every output axis may be cut; repeated axes read the whole input axis."""

    @staticmethod
    def _repeated(node: gs.Node, ctxt: NetworkContext) -> list[bool]:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        return [o != i for i, o in zip(x.shape, y.shape)]

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return tuple(range(len(self._out_shape(node, ctxt))))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        shape = ctxt[node.inputs[0].name].shape
        data = tuple((0, size) if repeated else part
                     for size, part, repeated in zip(shape, out, self._repeated(node, ctxt)))
        return [data, _full(ctxt[node.inputs[1].name].shape)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        shape = ctxt[node.inputs[0].name].shape
        data = tuple(Extent(size) if repeated else Extent(size, axis)
                     for axis, (size, repeated) in enumerate(zip(shape, self._repeated(node, ctxt))))
        return [data, tuple(Extent(size) for size in ctxt[node.inputs[1].name].shape)]

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, object]:
        repeated = self._repeated(node, ctxt)
        return {**node.attrs, TILE_START: [start if r else 0 for (start, _), r in zip(out, repeated)]}


class ExpandTiling(Elementwise):
    """Expand on a cluster: the data input broadcast as in Elementwise, the ``shape`` input whole."""

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        return [super().input_boxes(node, ctxt, out)[0], _full(ctxt[node.inputs[1].name].shape)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        return [super().input_extents(node, ctxt)[0], tuple(Extent(size) for size in ctxt[node.inputs[1].name].shape)]


def _tile_of_tile(x_name: str, y_name: str, x_shape: tuple[int, ...], y_shape: tuple[int, ...], start: list[int],
                  dtype: DataType) -> str:
    """One tile of a Tile's output: output position ``i`` of an axis reads input ``(start + i) mod n``."""
    names = counters(len(y_shape))
    sources = [f"({name} + {begin % size}) % {size}" if (begin % size or length > size) else name
               for name, begin, size, length in zip(names, start, x_shape, y_shape)]
    source = " + ".join(f"({s}) * {stride}" for s, stride in zip(sources, dense_strides(x_shape))) or "0"
    body = [f"dst[{offset(names, dense_strides(y_shape))}] = src[{source}];"]
    return block(typed_views(dtype, {"src": x_name}, {"dst": y_name}) + nested_loops(y_shape, body))


class TileParser(NodeParser):
    """Constant ``repeats`` (one per axis, each >= 0)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        repeats = [int(r) for r in np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "repeats")).reshape(-1)]
        if len(repeats) != len(x.shape) or any(r < 0 for r in repeats):
            raise NodeMismatch("shape", f"repeats {repeats} do not fit an input of shape {list(x.shape)}")
        start = NodeParser.attribute(node, TILE_START, None)
        if start is not None:  # one tile on a cluster (TileTiling)
            if y.numel == 0 or x.numel == 0:
                return {"call": "/* empty tile: no code */", "size": 0}
            return {"call": _tile_of_tile(x.c_name, y.c_name, x.shape, y.shape, list(start), x.dtype), "size": 0}
        if [d * r for d, r in zip(x.shape, repeats)] != list(y.shape):
            raise NodeMismatch("shape", f"output shape {list(y.shape)} is not input {list(x.shape)} tiled {repeats}")
        shape = [size for pair in zip(repeats, x.shape) for size in pair]
        strides = [stride for source in dense_strides(x.shape) for stride in (0, source)]
        return {"call": strided_copy(x.c_name, y.c_name, x.dtype, shape, strides), "size": 0}


class ExpandParser(NodeParser):
    """Broadcast to the output's static shape (the ``shape`` input decided it; run-time shapes never get here)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        padded = [1] * (len(y.shape) - len(x.shape)) + list(x.shape)
        if len(x.shape) > len(y.shape) or any(s != 1 and s != t for s, t in zip(padded, y.shape)):
            raise NodeMismatch("shape", f"input {list(x.shape)} does not broadcast to output {list(y.shape)}")
        strides = broadcast_strides(tuple(x.shape), tuple(y.shape))
        return {"call": strided_copy(x.c_name, y.c_name, x.dtype, list(y.shape), strides), "size": 0}


_CHECKER = NodeTypeChecker((None, None), (None,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Tile": (NodeMapper(TileParser(), (NodeBinding(_CHECKER, CALL),), name="Tile any type",
                        tile_constraint=TileTiling()),),
    "Expand": (NodeMapper(ExpandParser(), (NodeBinding(_CHECKER, CALL),), name="Expand any type",
                          tile_constraint=ExpandTiling()),),
}
NODE_TESTED = ("Tile", "Expand")
