"""Trilu: the upper or lower triangle of the last two axes (every matrix of a batch), constant ``k``, any type."""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.indexing import require_same_type
from deeploy_generic_c.kernels.strided import block, nested_loops, typed_views


class TriluParser(NodeParser):
    """``upper=1`` keeps ``j - i >= k``, ``upper=0`` keeps ``j - i <= k``; the rest becomes zero."""

    inputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        if len(x.shape) < 2:
            raise NodeMismatch("shape", f"Trilu needs rank >= 2, the input has rank {len(x.shape)}")
        k = 0
        if NodeParser.is_present(node, 1):
            k = int(np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "k")).reshape(-1)[0])
        rows, columns = x.shape[-2], x.shape[-1]
        k = min(max(k, -rows - 1), columns + 1)  # beyond these every element is kept or dropped alike: fits int32
        keep = f"i2 - i1 >= {k}" if int(NodeParser.attribute(node, "upper", 1)) else f"i2 - i1 <= {k}"
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        at = f"(i0 * {rows} + i1) * {columns} + i2"
        body = [f"dst[{at}] = ({keep}) ? src[{at}] : ({x.dtype.c_type})0;"]
        shape = [math.prod(x.shape[:-2]), rows, columns]
        return {"call": block(typed_views(x.dtype, {"src": x.c_name}, {"dst": y.c_name}) + nested_loops(shape, body)),
                "size": 0}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Trilu": single_binding(TriluParser(), NodeTypeChecker((None, None), (None,)), "Trilu any type"),
}
NODE_TESTED = ("Trilu",)
