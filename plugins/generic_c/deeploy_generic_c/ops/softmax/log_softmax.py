"""LogSoftmax along one axis (opset 13 semantics; older models reach it through the version converter), float32
and float64.

Written as ``(x - max) - log(sum(exp(x - max)))``: the subtraction keeps every
exponential in (0, 1], so a row of large values neither overflows nor gives
log(0), and the result keeps the precision of ``x - max`` (the log of a
softmax that underflowed to 0 would be -inf).  The sum runs in double.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import node_axis_geometry, row_loops
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.row_softmax import row_peak, row_pointers, views
from deeploy_generic_c.kernels.strided import block


class LogSoftmaxParser(NodeParser):
    """Any single axis (default -1)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        outer, length, inner = node_axis_geometry([int(d) for d in x.shape], int(NodeParser.attribute(node, "axis", -1)))
        exp = "expf" if x.dtype is dtypes.FLOAT32 else "exp"
        c_type = x.dtype.c_type
        body = [
            *row_pointers(x.dtype, length, inner),
            *row_peak(x.dtype, length, inner),
            "(void)at;",
            "double sum = 0.0;",
            f"for (int32_t a = 0; a < {length}; ++a) sum += {exp}(row[a * {inner}] - peak);",
            f"const {c_type} log_sum = ({c_type})log(sum);",
            f"for (int32_t a = 0; a < {length}; ++a) out[a * {inner}] = (row[a * {inner}] - peak) - log_sum;",
        ]
        return {"call": block(views(x.dtype, x.c_name, y.c_name) + row_loops(outer, inner, body)),
                "size": x.numel * 4}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "LogSoftmax": (NodeMapper(LogSoftmaxParser(), tuple(NodeBinding(NodeTypeChecker((t,), (t,)), TEMPLATE)
                                                        for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
                              name="LogSoftmax float32/float64", tile_constraint=AlongAxes("softmax")),),
}

NODE_TESTED = ("LogSoftmax",)
