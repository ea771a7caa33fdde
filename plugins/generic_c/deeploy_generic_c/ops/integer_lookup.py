"""``IntegerLookup``: a quantised element-wise layer as one load per value from a 256-entry table.

The core's lowering (:mod:`deeploy_core.lowering.quantized_lookup`) turns
DequantizeLinear → Sigmoid/Tanh/HardSwish/LeakyRelu/… → QuantizeLinear (and a
bare rescale) on 8-bit tensors into ``IntegerLookup(x, table)`` with the table
already in the mode's arithmetic; the kernel only indexes it with
``x - min(x's type)``.  Tiled like any element-wise layer, the table whole in
every tile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.scalar_parameters import ScalarParameters
from deeploy_generic_c.parsing.integer_bindings import INLINE

LOOKUP_OP = "IntegerLookup"


def _table_type(types: Sequence[int | None], attributes: Mapping[str, Any]) -> Sequence[int]:
    """The output has the table's element type (the QuantizeLinear's)."""
    if len(types) < 2 or not types[1]:
        raise ValueError("input 1 (the table) has no element type")
    return [types[1]]


LOOKUP_SCHEMA = CustomOpSchema(LOOKUP_OP, types=_table_type)


class IntegerLookupParser(NodeParser):
    """``y[i] = table[x[i] - min]`` for 8-bit x and a constant table of 256 entries."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, table, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if x.dtype.numpy.itemsize != 1 or x.dtype.is_float:
            raise NodeMismatch("dtype", f"the input is {x.dtype}; the table is indexed by 8-bit integers")
        if table.values is None or table.numel != 256:
            raise NodeMismatch("shape", "the table must be a constant of 256 entries")
        offset = "+ 128" if x.dtype.numpy.kind == "i" else ""
        code = (f"for (int32_t i = 0; i < {y.numel}; ++i) "
                f"{y.c_name}[i] = {table.c_name}[(int32_t){x.c_name}[i] {offset}];")
        arithmetic = NodeParser.attribute(node, "arithmetic", "")
        arithmetic = arithmetic.decode() if isinstance(arithmetic, bytes) else str(arithmetic)
        described: dict[str, object] = {"entries": 256, "range": [int(min(table.values.reshape(-1))),
                                                                  int(max(table.values.reshape(-1)))]}
        if arithmetic:
            described["arithmetic"] = arithmetic
        return {"code": code, "size": y.numel, "requantization": described}


SCHEMAS: tuple[CustomOpSchema, ...] = (LOOKUP_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    LOOKUP_OP: (NodeMapper(IntegerLookupParser(), (NodeBinding(NodeTypeChecker((None, None), (None,)), INLINE),),
                           name="IntegerLookup 8-bit table", tile_constraint=ScalarParameters(1)),),
}
