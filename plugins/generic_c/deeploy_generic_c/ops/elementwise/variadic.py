"""Max, Min, Sum and Mean of any number of inputs (one included), all broadcast together as numpy does.

Two float32 inputs keep :mod:`.float32`'s vectorised binary kernels (tried
first); every other arity and type is folded here left to right
in one loop, so no intermediate tensor is written.  Float Max/Min follow the
binary kernels' rule (a NaN operand gives the other one, like fmaxf/fminf).
Sum and Mean are for floats only, as ONNX types them.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper
from deeploy_generic_c.kernels.typed import FLOATS, NUMERIC, c_literal, shared_type
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("Sum", "Mean")


def _step(op: str, dtype: DataType, acc: str, value: str) -> str:
    """One fold step: the new accumulator from the old one and the next operand."""
    if op == "Max":
        return f"({acc} >= {value} || {value} != {value}) ? {acc} : {value}" if dtype.is_float else \
            f"{acc} >= {value} ? {acc} : {value}"
    if op == "Min":
        return f"({acc} <= {value} || {value} != {value}) ? {acc} : {value}" if dtype.is_float else \
            f"{acc} <= {value} ? {acc} : {value}"
    return f"{acc} + {value}"


class VariadicParser(TypedElementwiseParser):
    """One or more inputs of one type, folded left to right."""

    inputs = (1, None)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        raise AssertionError("the fold is written as statements (body)")

    def body(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str], target: str) -> str:
        op = "Sum" if node.op == "Mean" else node.op
        steps = [f"{target} = {values[0]};"]
        steps += [f"{target} = {_step(op, out, target, value)};" for value in values[1:]]
        if node.op == "Mean":
            steps.append(f"{target} = {target} / {c_literal(len(values), out)};")
        return " ".join(steps)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: typed_mapper(VariadicParser(), shared_type(NUMERIC), f"{op} any number of inputs") for op in ("Max", "Min")},
    **{op: typed_mapper(VariadicParser(), shared_type(FLOATS), f"{op} any number of float inputs") for op in ("Sum", "Mean")},
}
