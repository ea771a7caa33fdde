"""Element types in generated C: literals, wrapping integer arithmetic, defined float->integer conversion, and a
type checker for ops whose operands share one type.

Why wrapping through unsigned types: numpy and ONNX wrap integer results modulo
2^bits, while signed overflow in C is undefined behaviour (and int8/int16
operands are promoted to ``int`` before they are added, uint16 x uint16 can
overflow ``int``).  Unsigned arithmetic of ``uint32_t``/``uint64_t`` wraps by
definition; converting the result back to a signed type is implementation
defined (modulo 2^bits on every compiler we target), never undefined.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NetworkContext, NodeTypeChecker, dtypes
from deeploy_generic_c.parsing.common import c_float

FLOATS: tuple[DataType, ...] = (dtypes.FLOAT32, dtypes.FLOAT64)
SIGNED: tuple[DataType, ...] = (dtypes.INT8, dtypes.INT16, dtypes.INT32, dtypes.INT64)
UNSIGNED: tuple[DataType, ...] = (dtypes.UINT8, dtypes.UINT16, dtypes.UINT32, dtypes.UINT64)
INTEGERS: tuple[DataType, ...] = SIGNED + UNSIGNED
NUMERIC: tuple[DataType, ...] = FLOATS + INTEGERS
EVERY: tuple[DataType, ...] = NUMERIC + (dtypes.BOOL,)


def wide_unsigned(dtype: DataType) -> str:
    """The unsigned type that integer arithmetic of ``dtype`` wraps in (never promoted to signed ``int``)."""
    return "uint64_t" if dtype.bits == 64 else "uint32_t"


def wrapped(dtype: DataType, expression: str) -> str:
    """``expression`` (written over ``wide_unsigned`` operands) converted back to ``dtype``."""
    return f"({dtype.c_type})({expression})"


def c_literal(value: float | int, dtype: DataType) -> str:
    """``value`` as a C constant of ``dtype`` (floats exact in hexadecimal, integer extremes without overflow)."""
    if dtype is dtypes.FLOAT32:
        return c_float(float(value))
    if dtype is dtypes.FLOAT64:
        number = float(value)
        if number != number:
            return "NAN"
        if number in (float("inf"), float("-inf")):
            return "INFINITY" if number > 0 else "(-INFINITY)"
        return number.hex() if number != 0 else "0.0"
    number = int(value)
    if dtype.signed and number == -(1 << (dtype.bits - 1)):
        return f"({number + 1} - 1)" if dtype.bits <= 32 else f"(-INT64_C({-number - 1}) - 1)"
    if dtype.bits == 64:
        return f"UINT64_C({number})" if not dtype.signed else f"INT64_C({number})"
    return f"{number}u" if not dtype.signed and number > 0x7FFFFFFF else str(number)


def integer_bounds(dtype: DataType) -> tuple[int, int]:
    """The smallest and largest value of an integer type."""
    if dtype.signed:
        return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    return 0, (1 << dtype.bits) - 1


def from_double(value: str, dtype: DataType) -> str:
    """The double ``value`` converted to ``dtype``: truncated toward zero like C, but defined everywhere.

    C leaves a float->integer conversion out of the target's range undefined;
    here NaN gives 0 and values beyond the range saturate (numpy's result there
    is platform dependent, so no reference can disagree with a defined one).
    """
    if dtype.is_float:
        return f"({dtype.c_type})({value})"
    low, high = integer_bounds(dtype)
    return (f"(({value}) != ({value}) ? ({dtype.c_type})0 : ({value}) < {float(low).hex()} ? {c_literal(low, dtype)} "
            f": ({value}) >= {float(high + 1).hex()} ? {c_literal(high, dtype)} : ({dtype.c_type})({value}))")


def math_function(name: str, dtype: DataType) -> str:
    """The math.h function ``name`` for ``dtype``'s precision (``sinf`` for float32, ``sin`` for float64)."""
    return f"{name}f" if dtype is dtypes.FLOAT32 else name


@dataclass(frozen=True)
class SharedType(NodeTypeChecker):
    """Inputs from ``first`` on share one type among ``allowed``; the output has that type, or ``result``.

    Inputs before ``first`` must have the types in ``leading`` (Where's bool condition).
    """

    allowed: tuple[DataType, ...] = ()
    result: DataType | None = None
    first: int = 0
    leading: tuple[DataType, ...] = ()

    def check(self, node: gs.Node, ctxt: NetworkContext) -> str | None:
        for index, want in enumerate(self.leading):
            have = ctxt[node.inputs[index].name].dtype
            if have != want:
                return f"input {index} is {have}, the kernel takes {want}"
        types = [ctxt[tensor.name].dtype for tensor in node.inputs[self.first:] if tensor.name]
        if not types:
            return "no data input"
        if any(dtype != types[0] for dtype in types):
            return f"inputs have different types ({', '.join(str(dtype) for dtype in types)})"
        if types[0] not in self.allowed:
            return f"input type {types[0]} is not one of {', '.join(str(dtype) for dtype in self.allowed)}"
        want = self.result or types[0]
        have = ctxt[node.outputs[0].name].dtype
        if have != want:
            return f"output is {have}, the kernel gives {want}"
        return None


def shared_type(allowed: Sequence[DataType], result: DataType | None = None,
                leading: tuple[DataType, ...] = ()) -> SharedType:
    """A :class:`SharedType` checker for any number of inputs."""
    return SharedType(inputs=(None,), outputs=(None,), variadic=True, allowed=tuple(allowed), result=result,
                      first=len(leading), leading=leading)
