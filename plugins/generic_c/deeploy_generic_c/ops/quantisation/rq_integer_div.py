"""``IntegerDiv`` followed by a requantisation, in one kernel: Deeploy's ``RQIntegerDiv`` and this platform's fusion.

Both compute §4.6's division first (``deeploy-op-semantics.md``; unverified against a peer, like IntegerDiv):
``num = Delta*eta*A; den = eta*B + eps; q = int32(c_div(num + sgn(num)*(den >> 1), den))`` in 64 bits, B
broadcast to A.  Then:

* ``RQIntegerDiv`` (§4.7, unverified, no test anywhere), as a user's model carries it: inputs
  ``(A, B, requant_mul, requant_add, requant_div)`` of which only the first element of the last three is read,
  ``requant_div`` holding the shift count itself (Deeploy's kernel shifts by it); the result is
  ``clamp((q*mul + add + 2^(s-1)) >> s, -128, 127)`` whatever the ``div``/``n_levels``/``signed`` attributes
  say (Deeploy's parser requires them, its kernel ignores them; here they are not needed).
* ``IntegerDivRequantShift``: what ``deeploy_generic_c.lowering_dialect`` makes of an IntegerDiv whose only
  reader is a RequantShift.  Inputs ``(A, B, mul, add)`` with the RequantShift's attributes: exactly §2 applied
  to ``q`` (per-channel mul/add along axis 1, the ``n_levels``/``signed`` clamp), i.e. the unfused pair bit
  for bit, without the int32 quotient tensor in memory.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    ChannelParameters, CustomOpSchema, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.dialect import (
    channel_index,
    element_loops,
    first_constant,
    integer_attribute,
    require_integer,
    saturate_int8,
)
from deeploy_generic_c.parsing.scalar_parameters import ScalarParameters
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE
from deeploy_generic_c.kernels.requantisation import Requantisation


def quotient_statements(node: gs.Node, a: str, b: str) -> str:
    """C statements setting ``g`` to IntegerDiv's int32 quotient of the elements ``a`` and ``b`` (§4.6)."""
    delta, eps, eta = (integer_attribute(node, name) for name in ("Delta", "eps", "eta"))
    return (f"const int64_t num = {delta * eta}LL * (int64_t){a}; const int64_t den = {eta}LL * (int64_t){b} + {eps}LL; "
            f"const int64_t g = (int32_t)((num + (num >= 0 ? (den >> 1) : -(den >> 1))) / den);")


class RQIntegerDivParser(NodeParser):
    """Deeploy's RQIntegerDiv: IntegerDiv, then the first requant_mul/add/div (a shift) and an int8 clamp."""

    inputs = (5, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        require_integer(a, "input A")
        require_integer(b, "input B")
        mul, add, shift = (first_constant(ctxt, tensor, name) for tensor, name in
                           zip(node.inputs[2:], ("requant_mul", "requant_add", "requant_div")))
        if not 0 <= shift <= 62:
            raise NodeMismatch("shape", f"RQIntegerDiv's requant_div (a shift count) is {shift}; it must be in 0..62")
        body = (f"{{ {quotient_statements(node, f'{a.c_name}[o0]', f'{b.c_name}[o1]')} {saturate_int8('g', mul, add, shift)} "
                f"{y.c_name}[y] = ({y.dtype.c_type})t; }}")
        return {"code": element_loops(y, [a, b], body), "size": y.numel,
                "requantization": {"shift": shift, "range": [-128, 127], "mul": mul, "add": add}}


class IntegerDivRequantShiftParser(NodeParser):
    """IntegerDiv fused with its RequantShift (inputs A, B, mul, add): §4.6 then exactly §2."""

    inputs = (4, 4)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        require_integer(a, "input A")
        require_integer(b, "input B")
        channels = y.shape[1] if len(y.shape) > 1 else 1
        requant = Requantisation(node, ctxt, node.inputs[2].name, node.inputs[3].name, channels)
        store = requant.store(f"{y.c_name}[y]", y.dtype.c_type, "g", channel_index(y))
        body = f"{{ {quotient_statements(node, f'{a.c_name}[o0]', f'{b.c_name}[o1]')} {store} }}"
        return {"code": element_loops(y, [a, b], body, per_channel=True), "size": y.numel,
                "requantization": requant.describe()}


FUSED_OP = "IntegerDivRequantShift"
"""The internal op of an IntegerDiv fused with the RequantShift after it (plain composition semantics)."""

SCHEMAS: tuple[CustomOpSchema, ...] = (CustomOpSchema("RQIntegerDiv"),)
"""Output shaped like A; typed int8 by the integer typing."""

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "RQIntegerDiv": (NodeMapper(RQIntegerDivParser(), (NodeBinding(NodeTypeChecker((None,), (dtypes.INT8,)), INLINE),),
                                name="RQIntegerDiv integer (first mul/add, int8 clamp)", tile_constraint=ScalarParameters(2)),),
    FUSED_OP: (NodeMapper(IntegerDivRequantShiftParser(), (NodeBinding(ANY, INLINE),), name="IntegerDiv + RequantShift integer",
                          tile_constraint=ChannelParameters(data_inputs=2)),),
}
