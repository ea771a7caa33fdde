"""Checks shared by the ops that read an index tensor (Gather*, Scatter*): index and value types, constant ranges."""

from __future__ import annotations

from deeploy_core.plugin_api import Buffer, NodeMismatch, dtypes
from deeploy_generic_c.kernels.strided import check_constant_indices


def require_same_type(source: Buffer, target: Buffer, what: str = "output") -> None:
    if source.dtype != target.dtype:
        raise NodeMismatch("dtype", f"{what} type {target.dtype} differs from the data's type {source.dtype}")


def require_index_type(indices: Buffer) -> None:
    """ONNX index tensors are int32 or int64; both are read as they are (no copy to a wider type)."""
    if indices.dtype not in (dtypes.INT32, dtypes.INT64):
        raise NodeMismatch("dtype", f"indices are {indices.dtype}, the kernel takes int32 or int64")


def check_if_constant(indices: Buffer, length: int, what: str = "index") -> None:
    """Constant indices are range-checked at compile time; run-time ones are clamped by the generated code."""
    if indices.values is not None:
        check_constant_indices(indices.values, length, what)
