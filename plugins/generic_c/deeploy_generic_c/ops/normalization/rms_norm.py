"""RMSNormalization (opset 23) over the axes ``[axis, rank)``, float32 and float64.

``y = x / sqrt(mean(x^2) + epsilon) * scale``, the mean of squares in double
(a float32 sum of squares of a long row loses digits), every stash_type (the
statistics are at least as precise as any it asks for).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.norm_rows import epsilon, per_element, rows_and_length
from deeploy_generic_c.kernels.strided import block


class RMSNormParser(NodeParser):
    """axis, epsilon; scale with the normalised rows' size (or one value)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        rows, length = rows_and_length(node, x)
        scale = per_element(node, ctxt, 1, length, "scale")
        c_type = x.dtype.c_type
        lines = [
            f"const {c_type} *src = (const {c_type} *){x.c_name};",
            f"{c_type} *dst = ({c_type} *){y.c_name};",
            f"for (int32_t r = 0; r < {rows}; ++r) {{",
            f"    const {c_type} *row = src + r * {length};",
            f"    {c_type} *out = dst + r * {length};",
            "    double squares = 0.0;",
            f"    for (int32_t j = 0; j < {length}; ++j) squares += (double)row[j] * row[j];",
            f"    const double inverse = 1.0 / sqrt(squares / {length}.0 + {epsilon(node)});",
            f"    for (int32_t j = 0; j < {length}; ++j) out[j] = ({c_type})(row[j] * inverse) * {scale};",
            "}",
        ]
        return {"call": block(lines), "size": x.numel * 4}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "RMSNormalization": (NodeMapper(RMSNormParser(), tuple(NodeBinding(NodeTypeChecker((t, t), (t,)), TEMPLATE)
                                                           for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
                                    name="RMSNormalization float32/float64", tile_constraint=AlongAxes("layernorm")),),
}

NODE_TESTED = ("RMSNormalization",)
