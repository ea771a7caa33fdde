"""The element types a tensor may have, as one namespace for plugins (``plugin_api.dtypes.INT8``).

:mod:`deeploy_core.ir.dtypes` also holds the conversions the core uses (from
ONNX, numpy and names); a plugin needs only the types themselves, so the plugin
API exports one read-only namespace of them instead of eleven names.
"""

from __future__ import annotations

from typing import ClassVar

from deeploy_core.ir import dtypes as _dtypes
from deeploy_core.ir.dtypes import DataType


class ElementTypes:
    """The element types, as attributes: ``dtypes.FLOAT32``, ``dtypes.INT8``, ... (read-only)."""

    __slots__ = ()  # no instance attributes: ``dtypes.INT8 = ...`` raises AttributeError (read-only)

    FLOAT32: ClassVar[DataType] = _dtypes.FLOAT32
    """``float``: 32-bit IEEE float, the type of float networks."""
    FLOAT64: ClassVar[DataType] = _dtypes.FLOAT64
    """``double``: 64-bit IEEE float."""
    INT8: ClassVar[DataType] = _dtypes.INT8
    """``int8_t``: the activations and weights of integer (quantized) networks."""
    UINT8: ClassVar[DataType] = _dtypes.UINT8
    """``uint8_t``: unsigned 8-bit integers (activations after a ReLU in QDQ networks)."""
    INT16: ClassVar[DataType] = _dtypes.INT16
    """``int16_t``."""
    UINT16: ClassVar[DataType] = _dtypes.UINT16
    """``uint16_t``."""
    INT32: ClassVar[DataType] = _dtypes.INT32
    """``int32_t``: accumulators, biases and requantization multipliers of integer kernels."""
    UINT32: ClassVar[DataType] = _dtypes.UINT32
    """``uint32_t``."""
    INT64: ClassVar[DataType] = _dtypes.INT64
    """``int64_t``: ONNX's index type (shapes, axes, Gather indices)."""
    UINT64: ClassVar[DataType] = _dtypes.UINT64
    """``uint64_t``."""
    BOOL: ClassVar[DataType] = _dtypes.BOOL
    """ONNX ``bool``, stored as one ``uint8_t`` per element."""


dtypes = ElementTypes()
"""The one instance plugins use."""
