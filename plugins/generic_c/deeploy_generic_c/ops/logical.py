"""And, Or, Xor and Not of bool tensors (uint8_t in C), numpy broadcasting.

Any nonzero byte counts as true, so a bool produced elsewhere as 0/1 or
0/255 gives the same answer; the result is always 0 or 1.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper, dtypes
from deeploy_generic_c.kernels.typed import shared_type
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("And", "Or", "Xor", "Not")

OPERATORS = {"And": "&&", "Or": "||", "Xor": "!="}


class LogicalParser(TypedElementwiseParser):
    """Two bool operands."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        a, b = values
        return f"(uint8_t)(({a} != 0) {OPERATORS[node.op]} ({b} != 0))"


class NotParser(TypedElementwiseParser):
    """One bool operand."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        return f"(uint8_t)({values[0]} == 0)"


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: typed_mapper(LogicalParser(), shared_type((dtypes.BOOL,)), f"{op} bool") for op in OPERATORS},
    "Not": typed_mapper(NotParser(), shared_type((dtypes.BOOL,)), "Not bool"),
}
