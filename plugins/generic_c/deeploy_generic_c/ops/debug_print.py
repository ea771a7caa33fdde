"""Deeploy's ``DebugPrint``: a pass-through node that Deeploy's targets use to print a tensor while debugging.

Generated code for microcontrollers has no console to print to that every
platform shares, so the node is kept as a documented no-op: its output is a
copy of its input (any element type, any shape), and the network computes
exactly what it computes without the node.  It has no ONNX schema, so the
platforms declare it with :data:`DEBUG_PRINT_SCHEMA` (the input's type and shape).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema,
    NetworkContext,
    NodeBinding,
    NodeMapper,
    NodeParser,
    OperatorRepresentation,
)
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE

DEBUG_PRINT_SCHEMA = CustomOpSchema("DebugPrint")


class DebugPrintParser(NodeParser):
    """No-op: the output is a copy of the input (nothing is printed), any type and shape."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        code = f"for (int32_t i = 0; i < {y.numel}; ++i) {y.c_name}[i] = {x.c_name}[i];"
        return {"code": code, "size": y.numel}


SCHEMAS: tuple[CustomOpSchema, ...] = (DEBUG_PRINT_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "DebugPrint": (NodeMapper(DebugPrintParser(), (NodeBinding(ANY, INLINE),), name="DebugPrint no-op copy"),),
}
