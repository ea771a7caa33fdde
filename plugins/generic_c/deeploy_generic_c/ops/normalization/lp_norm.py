"""LpNormalization (p = 1 or 2) along one axis, float32 and float64.

The norm accumulates in double; a row whose norm is 0 gives 0 (ONNX's
reference: ``where(norm == 0, 0, x / norm)``) instead of 0/0.  p = 1 sums
absolute values, as the operator's definition and ONNX Runtime do.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import node_axis_geometry, row_loops
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.row_softmax import row_pointers, views
from deeploy_generic_c.kernels.strided import block


class LpNormParser(NodeParser):
    """p 1 or 2, any single axis (default -1)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        p = int(NodeParser.attribute(node, "p", 2))
        if p not in (1, 2):
            raise NodeMismatch("attribute", f"p={p} is not supported (ONNX allows 1 or 2)")
        outer, length, inner = node_axis_geometry([int(d) for d in x.shape], int(NodeParser.attribute(node, "axis", -1)))
        c_type = x.dtype.c_type
        term = "fabs((double)row[a * {inner}])" if p == 1 else "(double)row[a * {inner}] * row[a * {inner}]"
        body = [
            *row_pointers(x.dtype, length, inner),
            "double norm = 0.0;",
            f"for (int32_t a = 0; a < {length}; ++a) norm += {term.format(inner=inner)};",
            *(["norm = sqrt(norm);"] if p == 2 else []),
            f"for (int32_t a = 0; a < {length}; ++a) "
            f"out[a * {inner}] = norm == 0.0 ? ({c_type})0 : ({c_type})(row[a * {inner}] / norm);",
        ]
        return {"call": block(views(x.dtype, x.c_name, y.c_name) + row_loops(outer, inner, body)),
                "size": x.numel * 3}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "LpNormalization": (NodeMapper(LpNormParser(), tuple(NodeBinding(NodeTypeChecker((t,), (t,)), TEMPLATE)
                                                         for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
                                   name="LpNormalization float32/float64", tile_constraint=AlongAxes("softmax")),),
}

NODE_TESTED = ("LpNormalization",)
