"""Deeploy's ``Dequant``: the ``Sub(zp) → Mul(s)`` chain QuantLib folds into one node.

No ONNX schema exists, so the platforms declare it with :data:`DEQUANT_SCHEMA`
(output float32, the input's shape).  ``deeploy-op-semantics.md`` §5.2:
``y = float32(float32(q - zp) * s)`` with the scale and zero point as the
``scale`` and ``zero_point`` attributes — the same arithmetic as ONNX's
DequantizeLinear, verified against Deeploy's Mixed/Dequant data.  ``q - zp`` is
taken in float32, which is exact for the integer inputs and zero points of
these exports (|q - zp| < 2^24).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto

from deeploy_core.plugin_api import (
    CustomOpSchema, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import c_float, one_output_of
from deeploy_generic_c.parsing.integer_bindings import INLINE


DEQUANT_SCHEMA = CustomOpSchema("Dequant", types=one_output_of(TensorProto.FLOAT))
"""Dequant always produces float32, whatever integer type it reads."""


def float_attribute(node: gs.Node, name: str) -> float:
    """A scalar attribute as float32 (QuantLib writes floats, ints or 1-element tensors)."""
    if name not in node.attrs:
        raise NodeMismatch("attribute", f"attribute {name!r} is required")
    raw = node.attrs[name]
    value = np.asarray(raw.values if isinstance(raw, gs.Constant) else raw).reshape(-1)
    if value.size != 1:
        raise NodeMismatch("attribute", f"attribute {name!r} has {value.size} values; one scalar is supported")
    return float(np.float32(value[0]))


class DequantParser(NodeParser):
    """y = float32(q - zero_point) * scale element-wise, integer in, float32 out; scalar scale and zero point."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.dtype.is_float:
            raise NodeMismatch("dtype", f"input is {x.dtype}; Dequant reads integers", wants_integer=(x.name,))
        scale, zero_point = float_attribute(node, "scale"), float_attribute(node, "zero_point")
        code = (f"for (int32_t i = 0; i < {y.numel}; ++i) {y.c_name}[i] = "
                f"((float){x.c_name}[i] - {c_float(zero_point)}) * {c_float(scale)};")
        return {"code": code, "size": y.numel}


SCHEMAS: tuple[CustomOpSchema, ...] = (DEQUANT_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Dequant": (NodeMapper(DequantParser(), (NodeBinding(NodeTypeChecker((None,), (dtypes.FLOAT32,)), INLINE),),
                           name="Dequant integer to float32"),),
}
