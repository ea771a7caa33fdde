"""Hardmax along one axis (opset 13 semantics), float32 and float64: 1 at the row's first largest element (a NaN
counts as largest, as numpy's argmax has it in ONNX's reference), 0 elsewhere."""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import node_axis_geometry, row_loops
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.row_softmax import row_peak, row_pointers, views
from deeploy_generic_c.kernels.strided import block


class HardmaxParser(NodeParser):
    """Any single axis (default -1)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        outer, length, inner = node_axis_geometry([int(d) for d in x.shape], int(NodeParser.attribute(node, "axis", -1)))
        body = [
            *row_pointers(x.dtype, length, inner),
            *row_peak(x.dtype, length, inner),
            f"for (int32_t a = 0; a < {length}; ++a) out[a * {inner}] = a == at ? 1 : 0;",
        ]
        return {"call": block(views(x.dtype, x.c_name, y.c_name) + row_loops(outer, inner, body)), "size": x.numel}


TEMPLATE = NodeTemplate("${call}", headers=HEADERS)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Hardmax": (NodeMapper(HardmaxParser(), tuple(NodeBinding(NodeTypeChecker((t,), (t,)), TEMPLATE)
                                                  for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
                           name="Hardmax float32/float64", tile_constraint=AlongAxes("softmax")),),
}

NODE_TESTED = ("Hardmax",)
