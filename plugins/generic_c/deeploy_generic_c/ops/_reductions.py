"""How a scatter or a running sum combines two elements of one type, without undefined behaviour in C.

ScatterND/ScatterElements (``reduction`` add, mul, max, min) and CumSum add
elements of the tensor's own type.  Integers wrap as numpy and ONNX's reference
wrap: the arithmetic runs on an unsigned type at least as wide as ``unsigned
int`` (signed overflow, and ``uint16_t * uint16_t`` promoted to ``int``, would
be undefined), and the result goes back to a signed type through a branch
rather than an out-of-range conversion.  bool add/max is ``or`` and mul/min is
``and`` (numpy's bool arithmetic).  Float max/min propagate NaN as numpy's
``maximum``/``minimum`` do.
"""

from __future__ import annotations

from deeploy_core.plugin_api import BOOL, DataType, NodeMismatch

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _narrowed(dtype: DataType, wide: str) -> str:
    """``wide`` (an unsigned expression) reduced modulo 2**bits and read as ``dtype``."""
    unsigned = f"uint{dtype.bits}_t"
    if not dtype.signed:
        return f"({dtype.c_type})({wide})"
    limit = f"INT{dtype.bits}_MAX"
    return (f"(({unsigned})({wide}) <= ({unsigned}){limit} ? ({dtype.c_type})({unsigned})({wide}) "
            f": ({dtype.c_type})(-({dtype.c_type})({unsigned})~({unsigned})({wide}) - 1))")


def combined(dtype: DataType, reduction: str, old: str, new: str) -> str:
    """The C expression of ``old <reduction> new`` in ``dtype`` (``new`` alone for ``none``).

    ``old`` and ``new`` are evaluated more than once: pass plain names or array elements."""
    if reduction not in REDUCTIONS:
        raise NodeMismatch("attribute", f"reduction={reduction!r} is not supported")
    if reduction == "none":
        return new
    if dtype == BOOL:
        return f"(uint8_t)({old} || {new})" if reduction in ("add", "max") else f"(uint8_t)({old} && {new})"
    if dtype.is_float:
        return {
            "add": f"{old} + {new}",
            "mul": f"{old} * {new}",
            "max": f"(({old} > {new} || {old} != {old}) ? {old} : {new})",
            "min": f"(({old} < {new} || {old} != {old}) ? {old} : {new})",
        }[reduction]
    if reduction == "max":
        return f"({old} > {new} ? {old} : {new})"
    if reduction == "min":
        return f"({old} < {new} ? {old} : {new})"
    wide = "uint64_t" if dtype.bits == 64 else "uint32_t"
    operator = "+" if reduction == "add" else "*"
    return _narrowed(dtype, f"({wide}){old} {operator} ({wide}){new}")
