"""Pad with ``mode="wrap"`` (opset 19) for every element type; :mod:`.basic`'s Pad covers constant, reflect and edge.

Wrap padding reads the input circularly: output position ``i`` of an axis with
``n`` input elements and ``p`` leading pads reads input ``(i - p) mod n``,
written as ``(i + shift) % n`` with a non-negative ``shift`` known at compile
time, so no negative operand ever reaches C's ``%``.  Negative pads (crops)
follow the same formula.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.indexing import require_same_type
from deeploy_generic_c.kernels.strided import block, counters, dense_strides, nested_loops, normalise_axis, offset, typed_views


class WrapPadParser(NodeParser):
    """Constant ``pads`` (and ``axes``); only ``mode="wrap"`` (the other modes are :mod:`.basic`'s)."""

    inputs = (2, 4)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        mode = NodeParser.attribute(node, "mode", "constant")
        if mode != "wrap":
            raise NodeMismatch("attribute", f"mode={mode!r} is not wrap")
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        rank = len(x.shape)
        pads = [int(p) for p in np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "pads")).reshape(-1)]
        axes = list(range(rank))
        if NodeParser.is_present(node, 3):
            axes = [normalise_axis(int(a), rank) for a in np.asarray(NodeParser.constant_values(ctxt, node.inputs[3], "axes")).reshape(-1)]
        if len(pads) != 2 * len(axes):
            raise NodeMismatch("shape", f"{len(pads)} pads for {len(axes)} axes")
        begin = [0] * rank
        for position, axis in enumerate(axes):
            begin[axis] = pads[position]
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        if x.numel == 0:
            raise NodeMismatch("shape", "wrap padding of an empty input has nothing to repeat")
        names = counters(rank)
        sources = []
        for axis, (name, size) in enumerate(zip(names, x.shape)):
            shift = (-begin[axis]) % size
            sources.append(f"({name} + {shift}) % {size}" if (shift or y.shape[axis] > size) else name)
        source = " + ".join(f"({s}) * {stride}" for s, stride in zip(sources, dense_strides(x.shape))) or "0"
        body = [f"dst[{offset(names, dense_strides(y.shape))}] = src[{source}];"]
        return {"call": block(typed_views(x.dtype, {"src": x.c_name}, {"dst": y.c_name}) + nested_loops(y.shape, body)),
                "size": 0}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Pad": single_binding(WrapPadParser(), NodeTypeChecker((None, dtypes.INT64, None, None), (None,)), "Pad wrap any type"),
}
