"""Exact, compact C literals for constant tensors.

Floats are written as C99 hexadecimal floating constants (``0x1.8p+1f``):
exact, locale-independent and shorter than round-trip decimal.  Integers are
written in decimal.  Values are formatted in bulk with numpy, never through a
code formatter.
"""

from __future__ import annotations

import numpy as np

_PER_LINE = 12


def _float_literal(value: float, suffix: str) -> str:
    if np.isnan(value):
        return "(0.0f/0.0f)" if suffix else "(0.0/0.0)"
    if np.isinf(value):
        return ("-" if value < 0 else "") + ("(1.0f/0.0f)" if suffix else "(1.0/0.0)")
    text = float(value).hex()
    mantissa, exponent = text.split("p")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}p{exponent}{suffix}"


def c_array_values(values: np.ndarray) -> str:
    """The comma-separated initializer of ``values`` (flattened, C order), wrapped in lines."""
    flat = np.ascontiguousarray(values).reshape(-1)
    if flat.dtype == np.float16:  # carried as its bit pattern in uint16_t (deeploy_core.ir.dtypes.FLOAT16)
        flat = flat.view(np.uint16)
    if flat.dtype.kind == "f":
        suffix = "f" if flat.dtype == np.float32 else ""
        items = [_float_literal(value, suffix) for value in flat.tolist()]
    elif flat.dtype == np.bool_:
        items = [str(int(value)) for value in flat.tolist()]
    elif flat.dtype == np.int64:
        items = [f"INT64_C({value})" for value in flat.tolist()]
    elif flat.dtype == np.uint64:
        items = [f"UINT64_C({value})" for value in flat.tolist()]
    elif flat.dtype in (np.int32,):
        items = [str(value) if value != -(2**31) else "(-2147483647 - 1)" for value in flat.tolist()]
    else:
        items = [str(value) for value in flat.tolist()]
    if not items:
        return "0"
    lines = [", ".join(items[start : start + _PER_LINE]) for start in range(0, len(items), _PER_LINE)]
    return ",\n    ".join(lines)
