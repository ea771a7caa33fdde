"""Neg, Abs and Sign for the integer types and float64 (float32 Neg/Abs are :mod:`.float32`'s), Sign for float32.

Negating the most negative integer wraps to itself, as numpy does (computed in
``uint32_t``/``uint64_t``: ``-x`` of INT_MIN is undefined in C).  Sign keeps a
float NaN (numpy's sign of NaN is NaN) and a zero's value.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NodeMapper, dtypes
from deeploy_generic_c.kernels.typed import FLOATS, INTEGERS, shared_type, wide_unsigned, wrapped
from deeploy_generic_c.parsing.typed_parser import TypedElementwiseParser, typed_mapper

NODE_TESTED = ("Sign",)


def negated(dtype: DataType, value: str) -> str:
    """``-value`` in ``dtype`` with integers wrapping."""
    return f"-{value}" if dtype.is_float else wrapped(dtype, f"0u - ({wide_unsigned(dtype)}){value}")


class NegParser(TypedElementwiseParser):
    """-x, integers wrapping."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        return negated(out, values[0])


class AbsParser(TypedElementwiseParser):
    """|x|; the most negative integer stays itself (wraps)."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        x = values[0]
        if out.is_float:
            return f"fabs({x})"
        if not out.signed:
            return x
        return f"{x} < 0 ? {negated(out, x)} : {x}"


class SignParser(TypedElementwiseParser):
    """-1, 0 or 1 in the input's type (NaN stays NaN)."""

    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        x = values[0]
        if out.is_float:
            return f"{x} > 0 ? 1 : {x} < 0 ? -1 : {x}"
        if not out.signed:
            return f"({out.c_type})({x} != 0)"
        return f"({out.c_type})(({x} > 0) - ({x} < 0))"


_INTEGERS_AND_DOUBLE = INTEGERS + (dtypes.FLOAT64,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Neg": typed_mapper(NegParser(), shared_type(_INTEGERS_AND_DOUBLE), "Neg integer/float64"),
    "Abs": typed_mapper(AbsParser(), shared_type(_INTEGERS_AND_DOUBLE), "Abs integer/float64"),
    "Sign": typed_mapper(SignParser(), shared_type(FLOATS + INTEGERS), "Sign any number type"),
}
