"""Tile (constant repeats) and Expand (numpy broadcast to the output's static shape) for every element type.

Both are a strided copy (:func:`deeploy_generic_c.ops._strided.strided_copy`):
Expand reads broadcast axes with stride 0; Tile walks the output as
``[r0, d0, r1, d1, …]`` (repeat, then input axis) and reads the input with
strides ``[0, s0, 0, s1, …]``, which is exactly the tiled layout in C order.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTypeChecker,
    OperatorRepresentation,
    constant_values,
)
from deeploy_generic_c.ops._common import broadcast_strides, single_binding
from deeploy_generic_c.ops._indexing import require_same_type
from deeploy_generic_c.ops._strided import dense_strides, strided_copy


class TileParser(NodeParser):
    """Constant ``repeats`` (one per axis, each >= 0)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        repeats = [int(r) for r in np.asarray(constant_values(ctxt, node.inputs[1], "repeats")).reshape(-1)]
        if len(repeats) != len(x.shape) or any(r < 0 for r in repeats):
            raise NodeMismatch("shape", f"repeats {repeats} do not fit an input of shape {list(x.shape)}")
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
    "Tile": single_binding(TileParser(), _CHECKER, "Tile any type"),
    "Expand": single_binding(ExpandParser(), _CHECKER, "Expand any type"),
}
NODE_TESTED = ("Tile", "Expand")
