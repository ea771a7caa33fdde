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

from deeploy_core.plugin_api import DataType, NodeMismatch, dtypes

REDUCTIONS = ("none", "add", "mul", "max", "min")


def _narrowed(dtype: DataType, wide: str) -> str:
    """The unsigned variable ``wide`` reduced modulo 2**bits and read as ``dtype`` (no out-of-range conversion)."""
    unsigned = f"uint{dtype.bits}_t"
    if not dtype.signed:
        return f"({dtype.c_type}){wide}"
    return (f"(({unsigned}){wide} <= ({unsigned})INT{dtype.bits}_MAX ? ({dtype.c_type})({unsigned}){wide} "
            f": ({dtype.c_type})(-({dtype.c_type})({unsigned})~({unsigned}){wide} - 1))")


def combine(dtype: DataType, reduction: str, target: str, value: str) -> str:
    """The C statement ``target = target <reduction> value`` in ``dtype`` (``target = value`` for ``none``).

    ``target`` is an lvalue and ``value`` an expression without side effects; both may be read more than once."""
    if reduction not in REDUCTIONS:
        raise NodeMismatch("attribute", f"reduction={reduction!r} is not supported")
    if reduction == "none":
        return f"{target} = {value};"
    if dtype == dtypes.BOOL:
        operator = "||" if reduction in ("add", "max") else "&&"
        return f"{target} = (uint8_t)({target} {operator} {value});"
    if dtype.is_float:
        return f"{target} = " + {
            "add": f"{target} + {value};",
            "mul": f"{target} * {value};",
            "max": f"({target} > {value} || {target} != {target}) ? {target} : {value};",
            "min": f"({target} < {value} || {target} != {target}) ? {target} : {value};",
        }[reduction]
    if reduction in ("max", "min"):
        return f"{{ const {dtype.c_type} v = {value}; if (v {'>' if reduction == 'max' else '<'} {target}) {target} = v; }}"
    wide = "uint64_t" if dtype.bits == 64 else "uint32_t"
    operator = "+" if reduction == "add" else "*"
    return f"{{ const {wide} w = ({wide}){target} {operator} ({wide})({value}); {target} = {_narrowed(dtype, 'w')}; }}"
