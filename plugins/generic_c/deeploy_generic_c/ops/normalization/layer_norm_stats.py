"""LayerNormalization with its optional Mean and InvStdDev outputs, or in float64.

The runtime's float32 kernel of :mod:`.float32` (tried first) computes only Y; training
graphs and exporters that keep the statistics ask for all three outputs.  Mean
and variance accumulate in double, as that kernel's do; the outputs are
written in their own declared types (stash_type's float32 for the
statistics).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.norm_rows import epsilon, per_element, rows_and_length
from deeploy_generic_c.kernels.strided import block


class LayerNormStatsParser(NodeParser):
    """axis, epsilon; scale and optional bias with the normalised rows' size (or one value); Mean/InvStdDev."""

    inputs = (2, 3)
    outputs = (1, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        rows, length = rows_and_length(node, x)
        scale = per_element(node, ctxt, 1, length, "scale")
        bias = per_element(node, ctxt, 2, length, "bias")
        c_type = x.dtype.c_type
        stats = []
        for index, value in ((1, "mean"), (2, "inverse")):
            if len(node.outputs) > index and node.outputs[index].name:
                out = ctxt[node.outputs[index].name]
                stats.append(f"    (({out.dtype.c_type} *){out.c_name})[r] = ({out.dtype.c_type}){value};")
        affine = f"({c_type})((row[j] - mean) * inverse) * {scale}" + (f" + {bias}" if bias else "")
        lines = [
            f"const {c_type} *src = (const {c_type} *){x.c_name};",
            f"{c_type} *dst = ({c_type} *){y.c_name};",
            f"for (int32_t r = 0; r < {rows}; ++r) {{",
            f"    const {c_type} *row = src + r * {length};",
            f"    {c_type} *out = dst + r * {length};",
            "    double mean = 0.0, variance = 0.0;",
            f"    for (int32_t j = 0; j < {length}; ++j) mean += row[j];",
            f"    mean /= {length}.0;",
            f"    for (int32_t j = 0; j < {length}; ++j) variance += (row[j] - mean) * (row[j] - mean);",
            f"    const double inverse = 1.0 / sqrt(variance / {length}.0 + {epsilon(node)});",
            f"    for (int32_t j = 0; j < {length}; ++j) out[j] = {affine};",
            *stats,
            "}",
        ]
        return {"call": block(lines), "size": x.numel * 5}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "LayerNormalization": (NodeMapper(LayerNormStatsParser(), tuple(
        NodeBinding(NodeTypeChecker((t, t, t), (t, None, None)), TEMPLATE) for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
        name="LayerNormalization with statistics, float32/float64"),),
}
