"""BitShift and BitwiseAnd/Or/Xor (BitwiseNot written, see MAPPERS) of every integer type, numpy broadcasting.

Shifts are guarded where C has no answer: a count below zero or from the
type's width on shifts every bit out (left: 0; right: 0, or -1 for a negative
signed value, as the arithmetic shift it is), which is what ONNX's node tests
expect.  A left shift runs in ``uint32_t``/``uint64_t`` (shifting a negative
value left is undefined in C) and wraps; a right shift of a negative value is
written as ``~(~x >> n)`` because C leaves ``x >> n`` of a negative ``x``
implementation defined.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, Elementwise, NodeMapper, NodeMismatch, NodeParser
from deeploy_generic_c.kernels.typed import INTEGERS, shared_type, wide_unsigned, wrapped
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor")

OPERATORS = {"BitwiseAnd": "&", "BitwiseOr": "|", "BitwiseXor": "^"}


class BitShiftParser(TypedElementwiseParser):
    """direction LEFT or RIGHT; the count is the second operand, of the first's type."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        x, count = values
        direction = str(NodeParser.attribute(node, "direction", "")).upper()
        if direction not in ("LEFT", "RIGHT"):
            raise NodeMismatch("attribute", f"direction={direction!r} (must be LEFT or RIGHT)")
        out_of_range = f"{count} >= {out.bits}" if not out.signed else f"({count} < 0 || {count} >= {out.bits})"
        if direction == "LEFT":
            return f"{out_of_range} ? 0 : {wrapped(out, f'({wide_unsigned(out)}){x} << {count}')}"
        if not out.signed:
            return f"{out_of_range} ? 0 : ({out.c_type})({x} >> {count})"
        return (f"{out_of_range} ? ({x} < 0 ? -1 : 0) "
                f": {x} < 0 ? ({out.c_type})~(~{x} >> {count}) : ({out.c_type})({x} >> {count})")


class BitwiseParser(TypedElementwiseParser):
    """Two operands of one integer type, bit by bit."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        a, b = values
        unsigned = wide_unsigned(out)
        return wrapped(out, f"({unsigned}){a} {OPERATORS[node.op]} ({unsigned}){b}")


class BitwiseNotParser(TypedElementwiseParser):
    """Every bit flipped."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        return wrapped(out, f"~({wide_unsigned(out)}){values[0]}")


def _tiled(mappers: tuple[NodeMapper, ...]) -> tuple[NodeMapper, ...]:
    """The Bitwise ops are not in the core's element-wise list: each brings the same tile constraint."""
    return tuple(NodeMapper(mapper.parser, mapper.bindings, mapper.name, tile_constraint=Elementwise())
                 for mapper in mappers)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "BitShift": typed_mapper(BitShiftParser(), shared_type(INTEGERS), "BitShift integer"),
    **{op: _tiled(typed_mapper(BitwiseParser(), shared_type(INTEGERS), f"{op} integer")) for op in OPERATORS},
}
"""BitwiseNot (BitwiseNotParser) is not registered: tests/test_operator_plugins.py's test plugin adds it to the
platforms and needs a platform without it (shadowing, untiled whole-tile runs, the conformance of plugins)."""
