"""Equal, Less, Greater, LessOrEqual, GreaterOrEqual of every element type (bool out), and IsNaN/IsInf.

Comparisons read both operands in their own type (no promotion surprises: the
operands share one type, as ONNX requires) and store 0 or 1 as the uint8_t C
carries bool in.  NaN compares false with everything, as in numpy.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper, NodeParser, dtypes
from deeploy_generic_c.kernels.typed import EVERY, FLOATS, shared_type
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "IsNaN", "IsInf")

SYMBOLS = {"Equal": "==", "Less": "<", "Greater": ">", "LessOrEqual": "<=", "GreaterOrEqual": ">="}


class ComparisonParser(TypedElementwiseParser):
    """Two operands of one type, numpy broadcasting; the output is bool."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        a, b = values
        return f"(uint8_t)({a} {SYMBOLS[node.op]} {b})"


class IsNaNParser(TypedElementwiseParser):
    """NaN is the one value that differs from itself."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        return f"(uint8_t)({values[0]} != {values[0]})"


class IsInfParser(TypedElementwiseParser):
    """detect_positive / detect_negative choose which infinities count (both by default)."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        x = values[0]
        tests = []
        if NodeParser.attribute(node, "detect_positive", 1):
            tests.append(f"{x} == INFINITY")
        if NodeParser.attribute(node, "detect_negative", 1):
            tests.append(f"{x} == -INFINITY")
        return f"(uint8_t)({' || '.join(tests)})" if tests else f"((void){x}, (uint8_t)0)"


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: typed_mapper(ComparisonParser(), shared_type(EVERY, result=dtypes.BOOL), f"{op} any type") for op in SYMBOLS},
    "IsNaN": typed_mapper(IsNaNParser(), shared_type(FLOATS, result=dtypes.BOOL), "IsNaN float32/float64"),
    "IsInf": typed_mapper(IsInfParser(), shared_type(FLOATS, result=dtypes.BOOL), "IsInf float32/float64"),
}
