"""Add, Sub, Mul, Div, Mod and Pow for every element type C carries but float32 (whose vectorised kernels are in
:mod:`.float32`), with numpy broadcasting; Mod for float32 too, Pow with mixed base and exponent types.

Integers wrap modulo 2^bits as numpy and ONNX do, computed in ``uint32_t``/
``uint64_t`` so that no C overflow is undefined (see :mod:`deeploy_generic_c.kernels.typed`).  Defined
results where C has none and numpy warns:

* integer division and modulo by zero give 0 (numpy's result);
* ``MIN / -1`` wraps to ``MIN`` and ``MIN % -1`` is 0;
* an integer raised to a negative integer power gives the power truncated
  toward zero (1 for base 1, +-1 for base -1, else 0), where numpy refuses;
* a float power assigned to an integer saturates, NaN gives 0.

The family tries these before :mod:`.integer`, whose Add/Sub/Mul compute in
int32 (Deeploy's mixed integer-float dequantisation; the order the sorted
module names ``arithmetic`` and ``integer`` gave): operands of one shared
type take these kernels first, which wrap the same way but also in 64 bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    DataType, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, dtypes,
)
from deeploy_generic_c.kernels.typed import (
    FLOATS,
    INTEGERS,
    NUMERIC,
    from_double,
    math_function,
    shared_type,
    wide_unsigned,
    wrapped,
)
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NOT_FLOAT32 = tuple(dtype for dtype in NUMERIC if dtype is not dtypes.FLOAT32)

NODE_TESTED = ("Mod",)


def _negated(dtype: DataType, value: str) -> str:
    return wrapped(dtype, f"0u - ({wide_unsigned(dtype)}){value}")


class WrappingParser(TypedElementwiseParser):
    """Add, Sub or Mul of two operands of one type; integers wrap."""

    inputs = (2, 2)
    SYMBOLS = {"Add": "+", "Sub": "-", "Mul": "*"}

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        a, b = values
        symbol = self.SYMBOLS[node.op]
        if out.is_float:
            return f"{a} {symbol} {b}"
        unsigned = wide_unsigned(out)
        return wrapped(out, f"({unsigned}){a} {symbol} ({unsigned}){b}")


class DivParser(TypedElementwiseParser):
    """Div of one type; integer quotients truncate toward zero (C and ONNX), by zero give 0."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        a, b = values
        if out.is_float:
            return f"{a} / {b}"
        if not out.signed:
            return f"{b} == 0 ? 0 : ({out.c_type})({a} / {b})"
        return f"{b} == 0 ? 0 : {b} == -1 ? {_negated(out, a)} : ({out.c_type})({a} / {b})"


class ModParser(TypedElementwiseParser):
    """Mod; fmod=0: the remainder has the divisor's sign (numpy), fmod=1: the dividend's (C's % and fmod)."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        raise AssertionError("Mod is written as statements (body)")

    def body(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str], target: str) -> str:
        a, b = values
        fmod = NodeParser.attribute(node, "fmod", 0)
        if fmod not in (0, 1):
            raise NodeMismatch("attribute", f"fmod={fmod} (must be 0 or 1)")
        if out.is_float:
            remainder = f"{target} = {math_function('fmod', out)}({a}, {b});"
            if fmod == 1:
                return remainder
            # numpy: a nonzero remainder of the dividend's sign moves by one divisor; zero takes the divisor's sign.
            return (f"{remainder} if ({target} != 0) {{ if (({target} < 0) != ({b} < 0)) {target} += {b}; }} "
                    f"else {target} = {math_function('copysign', out)}(0, {b});")
        if not out.signed:
            return f"{target} = {b} == 0 ? 0 : ({out.c_type})({a} % {b});"
        statement = f"{target} = ({b} == 0 || {b} == -1) ? 0 : ({out.c_type})({a} % {b});"
        if fmod == 1:
            return statement
        return f"{statement} if ({target} != 0 && (({target} < 0) != ({b} < 0))) {target} = ({out.c_type})({target} + {b});"


@dataclass(frozen=True)
class PowTypes(NodeTypeChecker):
    """Base and exponent of any numeric types; the result has the base's type (float32 ^ float32 is elsewhere)."""

    def check(self, node: gs.Node, ctxt: NetworkContext) -> str | None:
        base, exponent, out = (ctxt[tensor.name].dtype for tensor in (*node.inputs[:2], node.outputs[0]))
        for label, dtype in (("base", base), ("exponent", exponent)):
            if dtype not in NUMERIC:
                return f"{label} is {dtype}, the kernel takes a number"
        if base is dtypes.FLOAT32 and exponent is dtypes.FLOAT32:
            return "float32 ^ float32 is the float32 kernel's"
        if out != base:
            return f"output is {out}, the kernel gives the base's type {base}"
        return None


class PowParser(TypedElementwiseParser):
    """Pow with mixed types: integer ^ integer by squaring (wrapping), anything with a float through double."""

    inputs = (2, 2)

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        raise AssertionError("Pow is written as statements (body)")

    def body(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str], target: str) -> str:
        a, b = values
        base, exponent = types
        if base.is_float or exponent.is_float:
            return f"{target} = {from_double(f'pow((double){a}, (double){b})', out)};"
        unsigned = wide_unsigned(out)
        squaring = (f"{unsigned} r = 1u, p = ({unsigned}){a}; {exponent.c_type} e = {b}; "
                    f"while (e > 0) {{ if (e & 1) r *= p; p *= p; e /= 2; }}")
        if exponent.signed:
            negative = "0u" if not base.signed else f"({a} == 1 ? 1u : {a} == -1 ? (({b} % 2 != 0) ? ({unsigned}){a} : 1u) : 0u)"
            squaring += f" if ({b} < 0) r = {negative};"
        return f"{{ {squaring} {target} = {wrapped(out, 'r')}; }}"


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    **{op: typed_mapper(WrappingParser(), shared_type(NOT_FLOAT32), f"{op} typed") for op in ("Add", "Sub", "Mul")},
    "Div": typed_mapper(DivParser(), shared_type(NOT_FLOAT32), "Div typed"),
    "Mod": typed_mapper(ModParser(), shared_type(FLOATS + INTEGERS), "Mod typed"),
    "Pow": typed_mapper(PowParser(), PowTypes((None, None), (None,)), "Pow mixed types"),
}
