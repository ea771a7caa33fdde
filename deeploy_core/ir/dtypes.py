"""Element types as the generated C sees them.

A tensor's type always comes from the model (its declared ONNX element type) or
from an explicit user option, never from the values of sample inputs: a model
must compile to the same C whatever data it is later fed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import TensorProto


@dataclass(frozen=True)
class DataType:
    """One element type: its C spelling, numpy dtype, width and signedness."""

    name: str
    c_type: str
    numpy_name: str
    bits: int
    signed: bool
    is_float: bool
    onnx_type: int

    @property
    def numpy(self) -> np.dtype:
        """The numpy dtype with the same memory layout."""
        return np.dtype(self.numpy_name)

    @property
    def storage_only(self) -> bool:
        """Whether C holds the type only as bits in an integer of its width (float16): kernels move and convert
        such tensors (Cast, views, data movement) but do no arithmetic on them."""
        return self.is_float and self.c_type != ("float" if self.bits == 32 else "double")

    @property
    def size(self) -> int:
        """Bytes per element."""
        return self.bits // 8

    def __str__(self) -> str:
        return self.name


FLOAT32 = DataType("float32", "float", "float32", 32, True, True, TensorProto.FLOAT)
FLOAT64 = DataType("float64", "double", "float64", 64, True, True, TensorProto.DOUBLE)
INT8 = DataType("int8", "int8_t", "int8", 8, True, False, TensorProto.INT8)
UINT8 = DataType("uint8", "uint8_t", "uint8", 8, False, False, TensorProto.UINT8)
INT16 = DataType("int16", "int16_t", "int16", 16, True, False, TensorProto.INT16)
UINT16 = DataType("uint16", "uint16_t", "uint16", 16, False, False, TensorProto.UINT16)
INT32 = DataType("int32", "int32_t", "int32", 32, True, False, TensorProto.INT32)
UINT32 = DataType("uint32", "uint32_t", "uint32", 32, False, False, TensorProto.UINT32)
INT64 = DataType("int64", "int64_t", "int64", 64, True, False, TensorProto.INT64)
UINT64 = DataType("uint64", "uint64_t", "uint64", 64, False, False, TensorProto.UINT64)
BOOL = DataType("bool", "uint8_t", "bool", 8, False, False, TensorProto.BOOL)
FLOAT16 = DataType("float16", "uint16_t", "float16", 16, True, True, TensorProto.FLOAT16)
"""IEEE half precision, carried as its bit pattern in a ``uint16_t`` (C99 has no half type).  bfloat16 is not
carried: numpy has no such type and onnx-graphsurgeon leaves such tensors without a numpy dtype."""

ALL_TYPES: tuple[DataType, ...] = (FLOAT32, FLOAT64, INT8, UINT8, INT16, UINT16, INT32, UINT32, INT64, UINT64, BOOL,
                                   FLOAT16)
_BY_ONNX = {dtype.onnx_type: dtype for dtype in ALL_TYPES}
_BY_NAME = {dtype.name: dtype for dtype in ALL_TYPES} | {
    dtype.c_type: dtype for dtype in ALL_TYPES if dtype is not BOOL and not dtype.storage_only}


class UnsupportedTypeError(ValueError):
    """An element type the generated C cannot represent (complex, string, float8, …)."""


def from_onnx(elem_type: int) -> DataType:
    """The type of an ONNX ``TensorProto`` element type."""
    if elem_type in _BY_ONNX:
        return _BY_ONNX[elem_type]
    name = TensorProto.DataType.Name(elem_type) if elem_type in TensorProto.DataType.values() else str(elem_type)
    raise UnsupportedTypeError(f"element type {name} is not supported")


def from_name(name: str) -> DataType:
    """The type called ``name`` (``int8``, ``int8_t``, ``float32``, ``float``)."""
    key = name.strip()
    if key not in _BY_NAME:
        raise UnsupportedTypeError(f"unknown type {name!r} (known: {', '.join(d.name for d in ALL_TYPES)})")
    return _BY_NAME[key]


def from_numpy(dtype: np.dtype) -> DataType:
    """The type with numpy dtype ``dtype``."""
    for candidate in ALL_TYPES:
        if candidate.numpy == np.dtype(dtype):
            return candidate
    raise UnsupportedTypeError(f"numpy dtype {np.dtype(dtype)} is not supported")
