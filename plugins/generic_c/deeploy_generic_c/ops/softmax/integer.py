"""Deeploy's ``iSoftmax``: the I-BERT integer softmax over the last axis (coeffA/B/C, log2, n_levels).

With ``d = x - max`` written as ``p - z·log2``, exp(d) is ``(coeffA·(p + coeffB)² + coeffC) >> z``; the row's
weights are summed in uint32 and scaled to ``n_levels - 1``.  The loop is written into the layer with the
operands' exact C types.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.requantisation import scalar_value
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper, require_integer_operand


class ISoftmaxParser(NodeParser):
    """I-BERT integer softmax over the last axis (coeffA/B/C, log2, n_levels)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        try:
            a, b, c, log2, levels = (int(scalar_value(node.attrs[name])) for name in ("coeffA", "coeffB", "coeffC", "log2", "n_levels"))
        except KeyError as missing:
            raise NodeMismatch("attribute", f"attribute {missing} is required") from None
        length = x.shape[-1]
        rows = x.numel // length
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int32_t peak = -2147483647 - 1;
    uint32_t e[{length}];
    uint32_t sum = 0;
    for (int32_t j = 0; j < {length}; ++j) peak = {x.c_name}[base + j] > peak ? {x.c_name}[base + j] : peak;
    for (int32_t j = 0; j < {length}; ++j) {{
        const int32_t d = (int32_t){x.c_name}[base + j] - peak;
        int32_t z = -d / {log2};
        if (z > 31) z = 31;
        const int64_t p = (int64_t)d + (int64_t)z * {log2};
        e[j] = (uint32_t)((({a}LL * (p + {b}) * (p + {b})) + {c}LL) >> z);
        sum += e[j];
    }}
    for (int32_t j = 0; j < {length}; ++j) {y.c_name}[base + j] = ({y.dtype.c_type})((e[j] * {levels - 1}u) / sum);
}}"""
        return {"code": code, "size": x.numel * 6}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "iSoftmax": (integer_mapper(ISoftmaxParser(), "iSoftmax integer", ANY),),
}
