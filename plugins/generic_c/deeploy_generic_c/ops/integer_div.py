"""Deeploy's ``IntegerDiv``: the integer division of I-BERT-style layer norms, rounded half away from zero.

The op has no ONNX schema (QuantLib exports it in the default domain), so the
platforms declare it through :data:`INTEGER_DIV_SCHEMA`.  The arithmetic
follows ``deeploy-op-semantics.md`` §4.6, computed in 64 bits so that the
``Delta*eta*A`` product cannot overflow:
``num = Delta*eta*A; den = eta*B + eps; y = trunc((num + sgn(num)*(den >> 1)) / den)`` with sgn(0) = +1.
Deeploy never exercised it against data, so the arithmetic is the written one (unverified against a peer).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.parsing.dialect import integer_attribute
from deeploy_generic_c.kernels.offset_loops import offset_loops

INTEGER_DIV_SCHEMA = CustomOpSchema("IntegerDiv")
"""Output shaped and typed like input A (B broadcasts to it); fake-quantised exports keep it float-declared."""


class IntegerDivParser(NodeParser):
    """y = round_half_away(Delta*eta*A / (eta*B + eps)), B broadcast to A; arithmetic unverified against a peer."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        for buffer, what in ((a, "input A"), (b, "input B")):
            if buffer.dtype.is_float:
                raise NodeMismatch("dtype", f"{what} is {buffer.dtype}, IntegerDiv takes integers",
                                   wants_integer=(buffer.name,))
        delta, eps, eta = (integer_attribute(node, name) for name in ("Delta", "eps", "eta"))
        shape, strides = collapse_broadcast(y.shape, [broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)])
        body = (f"{{ const int64_t num = (int64_t){delta * eta} * (int64_t){a.c_name}[o0]; "
                f"const int64_t den = (int64_t){eta} * (int64_t){b.c_name}[o1] + (int64_t){eps}; "
                f"{y.c_name}[y] = ({y.dtype.c_type})((num + (num >= 0 ? (den >> 1) : -(den >> 1))) / den); }}")
        return {"code": offset_loops(shape, strides, body), "size": y.numel}


INLINE = NodeTemplate("${code}", headers=("stdint.h",))

SCHEMAS: tuple[CustomOpSchema, ...] = (INTEGER_DIV_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "IntegerDiv": (NodeMapper(IntegerDivParser(), (NodeBinding(NodeTypeChecker((None, None), (dtypes.INT32,)), INLINE),),
                              name="IntegerDiv integer"),),
}
