"""Deeploy's ``RequantizedAdd``: the residual addition of integer networks, each side on its own scale.

Deeploy's PULP, Snitch and GAP9 targets hand this op to an external PULP-NN kernel whose source is not in
Deeploy, so ``deeploy-op-semantics.md`` (§8) leaves its rounding open.  This platform *defines* it as
three RequantShifts (§2) around an exact integer sum, one per attribute group ``rqs1_``, ``rqs2_``, ``rqsOut_``
(each ``mul``, ``add``, ``div`` (a power of two, shift = log2 div), ``signed``, ``n_levels`` or
``n_levels_out``)::

    rq(v; mul, add, s, range) = clamp((v*mul + add + 2^(s-1)) >> s, range)   # no rounding term when s = 0
    y = rq(rq(a; rqs1) + rq(b; rqs2); rqsOut)

so each input is brought to the common scale and saturated to its ``n_levels``/``signed`` range, the two are
added exactly, and the sum is requantised into the output's range (unsigned outputs included).  Every step
is in 64 bits; ``mul``/``add`` are scalars (only their first element is read).  The definition is this
project's choice and is not verified against PULP-NN.  Inputs broadcast as numpy does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema,
    Elementwise,
    NetworkContext,
    NodeBinding,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTypeChecker,
    OperatorRepresentation,
)
from deeploy_generic_c.parsing.dialect import element_loops, integer_attribute, require_integer, shift_of
from deeploy_generic_c.parsing.integer_bindings import INLINE

GROUPS = ("rqs1", "rqs2", "rqsOut")
"""The attribute prefixes: first input, second input, output."""

REPORT_KEYS = ("rqs1", "rqs2", "rqs_out")
"""How ``report.json``'s ``requantization`` names the groups of :data:`GROUPS` (its keys are snake_case)."""


@dataclass(frozen=True)
class RequantSpec:
    """One attribute group: ``v -> clamp((v*mul + add + 2^(shift-1)) >> shift, low, high)``."""

    mul: int
    add: int
    shift: int
    low: int
    high: int

    @classmethod
    def of(cls, node: gs.Node, prefix: str) -> RequantSpec:
        """The group ``prefix`` of ``node``'s attributes (n_levels or n_levels_out; signed 0/1)."""
        levels_name = f"{prefix}_n_levels" if f"{prefix}_n_levels" in node.attrs else f"{prefix}_n_levels_out"
        levels = integer_attribute(node, levels_name)
        if levels < 2:
            raise NodeMismatch("attribute", f"attribute {levels_name!r} of RequantizedAdd is {levels}; it needs at least 2")
        signed = bool(integer_attribute(node, f"{prefix}_signed"))
        low, high = (-(levels // 2), levels // 2 - 1) if signed else (0, levels - 1)
        shift = shift_of(integer_attribute(node, f"{prefix}_div"), f"attribute '{prefix}_div' of RequantizedAdd")
        return cls(integer_attribute(node, f"{prefix}_mul"), integer_attribute(node, f"{prefix}_add"), shift, low, high)

    def statements(self, target: str, value: str) -> str:
        """C statements requantising the int64 expression ``value`` into the int64 variable ``target``."""
        rounding = f" + {1 << (self.shift - 1)}" if self.shift > 0 else ""
        return (f"int64_t {target} = ((int64_t)({value}) * {self.mul}LL + {self.add}LL{rounding}) >> {self.shift}; "
                f"{target} = {target} < {self.low} ? {self.low} : ({target} > {self.high} ? {self.high} : {target});")

    def describe(self) -> dict[str, object]:
        return {"shift": self.shift, "range": [self.low, self.high], "mul": self.mul, "add": self.add}


def requantized_add_shapes(shapes: Sequence[tuple[int, ...] | None], attributes: Mapping[str, Any]) -> Sequence[tuple[int, ...]]:
    """The numpy broadcast of the two inputs' shapes."""
    if len(shapes) != 2 or any(shape is None for shape in shapes):
        raise ValueError("RequantizedAdd: two inputs with known shapes are required")
    try:
        return [tuple(int(dim) for dim in np.broadcast_shapes(*(tuple(shape) for shape in shapes if shape is not None)))]
    except ValueError:
        raise ValueError(f"RequantizedAdd: input shapes {shapes[0]} and {shapes[1]} do not broadcast") from None


class RequantizedAddParser(NodeParser):
    """y = rqOut(rq1(a) + rq2(b)): each input requantised and saturated, summed exactly, the sum requantised."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        require_integer(a, "input 0")
        require_integer(b, "input 1")
        first, second, out = (RequantSpec.of(node, prefix) for prefix in GROUPS)
        body = (f"{{ {first.statements('r1', f'{a.c_name}[o0]')} {second.statements('r2', f'{b.c_name}[o1]')} "
                f"{out.statements('t', 'r1 + r2')} {y.c_name}[y] = ({y.dtype.c_type})t; }}")
        return {"code": element_loops(y, [a, b], body), "size": y.numel,
                "requantization": {key: spec.describe() for key, spec in zip(REPORT_KEYS, (first, second, out))}}


SCHEMAS: tuple[CustomOpSchema, ...] = (CustomOpSchema("RequantizedAdd", shapes=requantized_add_shapes),)
"""Output shaped as the inputs broadcast; typed from the ``rqsOut_`` group by the integer typing."""

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "RequantizedAdd": (NodeMapper(RequantizedAddParser(), (NodeBinding(NodeTypeChecker((None, None), (None,)), INLINE),),
                                  name="RequantizedAdd integer (three RequantShifts)", tile_constraint=Elementwise()),),
}
