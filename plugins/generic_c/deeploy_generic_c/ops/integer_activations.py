"""Deeploy's integer activations: ``iGELU``, ``iHardswish`` and their requantised forms.

``deeploy-op-semantics.md`` gives the arithmetic, all in the raw integer domain and computed here in 64 bits:

* ``iGELU`` (§4.5, verified by the document against Deeploy's held-out models), attributes ``b`` (< 0) and
  ``one``: ``s = sign(x); q = min(|x|, -b); L = s*(one - (q + b)^2); y = x * ((one + L) >> 1)``, int32 out.
* ``iHardswish`` (§8, unverified: no test data exists), attributes ``one_over_six``, ``three``, ``six``:
  ``t = clamp(x + three, 0, six) * one_over_six; y = x * t``, int32 out.
* ``RequantizediGELU`` / ``RequantizediHardswish``, as a user's model carries Deeploy's fused nodes: the
  activation, then ``clamp((y*mul + add + 2^(s-1)) >> s, -128, 127)`` with only the first element of
  ``mul``/``add`` used and the clamp int8's whatever ``n_levels`` says (§4.5, §8).  Deeploy gives the
  iGELU form the inputs ``(x, mul, add, shift)`` and the iHardswish form the attributes ``mul``, ``add``,
  ``shift``; ``shift`` is the shift count itself.  The requantised iHardswish is unverified like iHardswish.
* ``iGELURequantShift`` / ``iHardswishRequantShift``: this platform's own fusion of an activation with the
  RequantShift after it (``deeploy_generic_c.lowering_dialect``).  Deeploy's fusion rewrites ``add`` into
  ``round(add/mul)``, which changes results unless ``add`` is 0, so these keep plain composition semantics
  under a name of their own: §2's RequantShift applied to the activation's int32 value, per-channel
  ``mul``/``add`` along axis 1 and the ``n_levels``/``signed`` clamp, bit for bit what the unfused pair gives
  but without the int32 tensor in memory.
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


def gelu_statements(node: gs.Node) -> str:
    """C statements turning ``x`` (int64) into ``g``, the int32 value of I-BERT's integer GELU (§4.5)."""
    b, one = integer_attribute(node, "b"), integer_attribute(node, "one")
    if b >= 0:
        raise NodeMismatch("attribute", f"attribute 'b' of {node.op} is {b}; I-BERT's GELU needs b < 0")
    return (f"const int64_t s = (int64_t)((x > 0) - (x < 0)); const int64_t q = s * x < {-b} ? s * x : {-b}; "
            f"const int64_t d = q + ({b}); const int64_t g = x * (({one} + s * ({one} - d * d)) >> 1);")


def hardswish_statements(node: gs.Node) -> str:
    """C statements turning ``x`` (int64) into ``g``, the int32 value of the integer hard swish (§8)."""
    one_over_six, three, six = (integer_attribute(node, name) for name in ("one_over_six", "three", "six"))
    return (f"int64_t h = x + {three}; h = h < 0 ? 0 : (h > {six} ? {six} : h); "
            f"const int64_t g = x * (h * {one_over_six});")


ACTIVATIONS = {"iGELU": gelu_statements, "iHardswish": hardswish_statements}
"""The activation each op family computes, by the plain op's name."""


class ActivationParser(NodeParser):
    """iGELU or iHardswish element-wise: integer in, int32 out."""

    inputs = (1, 1)

    def __init__(self, activation: str) -> None:
        self.activation = activation

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer(x, "input 0")
        statements = ACTIVATIONS[self.activation](node)
        body = f"{{ const int64_t x = (int64_t){x.c_name}[o0]; {statements} {y.c_name}[y] = ({y.dtype.c_type})g; }}"
        return {"code": element_loops(y, [x], body), "size": y.numel}


class DeeployRequantizedParser(NodeParser):
    """The activation, then (y*mul[0] + add[0] + 2^(s-1)) >> s clamped to int8 (Deeploy's fused form).

    RequantizediGELU takes mul, add and shift as inputs (x, mul, add, shift), RequantizediHardswish as
    attributes; only their first elements count.
    """

    def __init__(self, activation: str) -> None:
        self.activation = activation
        self.inputs = (4, 4) if activation == "iGELU" else (1, 1)

    def _parameters(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, int, int]:
        if self.activation == "iGELU":
            return (first_constant(ctxt, node.inputs[1], "mul"), first_constant(ctxt, node.inputs[2], "add"),
                    first_constant(ctxt, node.inputs[3], "shift"))
        return integer_attribute(node, "mul"), integer_attribute(node, "add"), integer_attribute(node, "shift")

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer(x, "input 0")
        mul, add, shift = self._parameters(node, ctxt)
        if not 0 <= shift <= 62:
            raise NodeMismatch("attribute", f"{node.op}'s shift is {shift}; it must be in 0..62")
        statements = ACTIVATIONS[self.activation](node)
        body = (f"{{ const int64_t x = (int64_t){x.c_name}[o0]; {statements} {saturate_int8('g', mul, add, shift)} "
                f"{y.c_name}[y] = ({y.dtype.c_type})t; }}")
        return {"code": element_loops(y, [x], body), "size": y.numel,
                "requantization": {"shift": shift, "range": [-128, 127], "mul": mul, "add": add}}


class ActivationRequantShiftParser(NodeParser):
    """The activation, then exactly RequantShift (mul/add per channel along axis 1, n_levels/signed clamp).

    This platform's fusion of the pair (inputs x, mul, add; both ops' attributes), see ``lowering_dialect``.
    """

    inputs = (3, 3)

    def __init__(self, activation: str) -> None:
        self.activation = activation

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer(x, "input 0")
        channels = y.shape[1] if len(y.shape) > 1 else 1
        requant = Requantisation(node, ctxt, node.inputs[1].name, node.inputs[2].name, channels)
        statements = ACTIVATIONS[self.activation](node)
        store = requant.store(f"{y.c_name}[y]", y.dtype.c_type, "g", channel_index(y))
        body = f"{{ const int64_t x = (int64_t){x.c_name}[o0]; {statements} {store} }}"
        return {"code": element_loops(y, [x], body, per_channel=True), "size": y.numel,
                "requantization": requant.describe()}


FUSED = {"iGELU": "iGELURequantShift", "iHardswish": "iHardswishRequantShift"}
"""The internal op of each activation fused with the RequantShift after it (plain composition semantics)."""

DEEPLOY_FUSED = {"iGELU": "RequantizediGELU", "iHardswish": "RequantizediHardswish"}
"""Deeploy's own fused op of each activation, as a model may carry it."""

SCHEMAS: tuple[CustomOpSchema, ...] = tuple(CustomOpSchema(op) for op in (*ACTIVATIONS, *DEEPLOY_FUSED.values()))
"""Each output has its input's shape; fake-quantised exports keep it float-declared (the integer typing retypes it)."""

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: (NodeMapper(ActivationParser(op), (NodeBinding(NodeTypeChecker((None,), (dtypes.INT32,)), INLINE),),
                       name=f"{op} integer"),) for op in ACTIVATIONS},
    **{fused: (NodeMapper(DeeployRequantizedParser(op),
                          (NodeBinding(NodeTypeChecker((None,), (dtypes.INT8,)), INLINE),),
                          name=f"{fused} integer (first mul/add, int8 clamp)", tile_constraint=ScalarParameters(1)),)
       for op, fused in DEEPLOY_FUSED.items()},
    **{fused: (NodeMapper(ActivationRequantShiftParser(op), (NodeBinding(ANY, INLINE),), name=f"{op} + RequantShift integer",
                          tile_constraint=ChannelParameters()),) for op, fused in FUSED.items()},
}
