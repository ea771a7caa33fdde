"""Deeploy's ``RequantShift`` in the raw integer domain: ``y = clamp((x*mul + add + 2^(s-1)) >> s)``.

The requantisation every integer layer of a QuantLib export ends with, on its own node; ``mul`` and ``add`` are
scalars or per channel along axis 1.  The loop is emitted inline with the exact C types of its operands, so one
template serves every combination of int8/uint8/int16/int32 inputs; the arithmetic (and the rounding and clamp,
written by :class:`~deeploy_generic_c.kernels.requantisation.Requantisation`) is ``deeploy-op-semantics.md`` §2.
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.requantisation import Requantisation
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper, require_integer_operand


class RequantShiftParser(NodeParser):
    """y = clamp((x*mul + add + 2^(s-1)) >> s); mul/add scalar or per channel along axis 1."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        channels = x.shape[1] if len(x.shape) > 1 else 1
        requant = Requantisation(node, ctxt, node.inputs[1].name, node.inputs[2].name, channels)
        outer = x.shape[0] if len(x.shape) > 1 else 1
        inner = math.prod(x.shape[2:]) if len(x.shape) > 1 else x.numel
        store = requant.store(f"{y.c_name}[base + i]", y.dtype.c_type, f"{x.c_name}[base + i]", "c")
        code = f"""for (int32_t n = 0; n < {outer}; ++n) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        const int32_t base = (n * {channels} + c) * {inner};
        for (int32_t i = 0; i < {inner}; ++i) {store}
    }}
}}"""
        return {"code": code, "size": x.numel * 3, "requantization": requant.describe()}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "RequantShift": (integer_mapper(RequantShiftParser(), "RequantShift integer", ANY),),
}
