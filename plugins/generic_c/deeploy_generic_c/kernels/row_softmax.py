"""Shared C of the ops that treat one axis as rows (LogSoftmax, Hardmax, LpNormalization): typed row pointers and
the row's largest element with numpy's NaN rule."""

from __future__ import annotations

from deeploy_core.plugin_api import DataType


def row_pointers(dtype: DataType, length: int, inner: int) -> list[str]:
    """``row`` (input) and ``out`` (output) of the row ``(o, i)`` inside :func:`row_loops`."""
    return [f"const {dtype.c_type} *row = src + o * {length * inner} + i;",
            f"{dtype.c_type} *out = dst + o * {length * inner} + i;"]


def views(dtype: DataType, x: str, y: str) -> list[str]:
    return [f"const {dtype.c_type} *src = (const {dtype.c_type} *){x};", f"{dtype.c_type} *dst = ({dtype.c_type} *){y};"]


def row_peak(dtype: DataType, length: int, inner: int) -> list[str]:
    """``peak``: the row's largest element, and ``at``: its first index; a NaN wins once seen (numpy's max and
    argmax)."""
    return [f"{dtype.c_type} peak = row[0];",
            "int32_t at = 0;",
            f"for (int32_t a = 1; a < {length}; ++a) {{",
            f"    const {dtype.c_type} v = row[a * {inner}];",
            "    if (peak == peak && (v != v || v > peak)) { peak = v; at = a; }",
            "}"]
