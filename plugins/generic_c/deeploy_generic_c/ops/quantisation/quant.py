"""Deeploy's ``Quant``: the ``Div(s) → Add(zp) → Round → Clip`` chain QuantLib folds into one node.

No ONNX schema exists, so the platforms declare it with :data:`QUANT_SCHEMA`
(int8 output, as Deeploy always emits, the input's shape).  The node carries the
reciprocal scale, so ``deeploy-op-semantics.md`` §5.1's node arithmetic is what
the kernel computes, each step in float32::

    v = x * scale; v = v + zero_point; q = trunc(v + 0.5*sign(v))   # half away from zero
    q = clamp(q, -2^(bw-1), 2^(bw-1) - 1) if signed else clamp(q, 0, 2^bw - 1)

The bounds come from ``bit_width``/``signed`` (as Deeploy rebuilds them), and
an unsigned range wider than int8 is refused rather than wrapped.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs
from onnx import TensorProto

from deeploy_core.plugin_api import (
    CustomOpSchema, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import c_float, one_output_of
from deeploy_generic_c.ops.quantisation.dequant import float_attribute
from deeploy_generic_c.parsing.integer_bindings import INLINE


QUANT_SCHEMA = CustomOpSchema("Quant", types=one_output_of(TensorProto.INT8))
"""Quant's output C type is always int8 in Deeploy."""


def quant_bounds(bit_width: int, signed: bool) -> tuple[int, int]:
    """The clamp range Deeploy rebuilds from ``bit_width`` and ``signed``."""
    return (-(1 << (bit_width - 1)), (1 << (bit_width - 1)) - 1) if signed else (0, (1 << bit_width) - 1)


class QuantParser(NodeParser):
    """float32 → int8: x*scale + zero_point in float32, rounded half away from zero, clamped to bit_width."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if not x.dtype.is_float:
            raise NodeMismatch("dtype", f"input is {x.dtype}; Quant reads float32")
        scale, zero_point = float_attribute(node, "scale"), float_attribute(node, "zero_point")
        bit_width, signed = int(float_attribute(node, "bit_width")), bool(float_attribute(node, "signed"))
        low, high = quant_bounds(bit_width, signed)
        if not 1 <= bit_width <= 8 or high > 127:
            raise NodeMismatch("attribute", f"bit_width {bit_width} (signed={int(signed)}) does not fit Quant's int8 output")
        code = f"""for (int32_t i = 0; i < {y.numel}; ++i) {{
    float v = {x.c_name}[i] * {c_float(scale)};
    v = v + {c_float(zero_point)};
    float q = truncf(v + (v > 0.0f ? 0.5f : (v < 0.0f ? -0.5f : 0.0f)));
    q = q < {low}.0f ? {low}.0f : (q > {high}.0f ? {high}.0f : q);
    {y.c_name}[i] = ({y.dtype.c_type})q;
}}"""
        return {"code": code, "size": y.numel}


SCHEMAS: tuple[CustomOpSchema, ...] = (QUANT_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Quant": (NodeMapper(QuantParser(), (NodeBinding(NodeTypeChecker((None,), (dtypes.INT8,)), INLINE),),
                         name="Quant float32 to int8"),),
}
