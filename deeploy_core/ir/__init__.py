"""The compiler's data model: element types, buffers and the network context."""

from deeploy_core.ir.buffers import Buffer, BufferKind
from deeploy_core.ir.context import NetworkContext
from deeploy_core.ir.dtypes import DataType

__all__ = ["Buffer", "BufferKind", "DataType", "NetworkContext"]
