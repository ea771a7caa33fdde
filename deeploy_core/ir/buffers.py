"""The buffers of a network, as the generated code will hold them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum

import numpy as np

from deeploy_core.ir.dtypes import DataType


class BufferKind(str, Enum):
    """Where a buffer lives and who owns it.

    ``input``/``output``: graph I/O, in the arena, alive for the whole run.
    ``activation``: produced and consumed by layers, in the arena for its lifetime.
    ``constant``: weights, emitted as ``static const`` data.
    ``transient``: scratch space of one layer, in the arena for that layer only.
    ``alias``: a reshaped view of another buffer (Reshape, Flatten, …): no storage.
    """

    INPUT = "input"
    OUTPUT = "output"
    ACTIVATION = "activation"
    CONSTANT = "constant"
    TRANSIENT = "transient"
    ALIAS = "alias"


@dataclass(eq=False)
class Buffer:
    """One tensor of the network with its C identifier and, after planning, its arena offset."""

    name: str
    c_name: str
    dtype: DataType
    shape: tuple[int, ...]
    kind: BufferKind
    values: np.ndarray | None = None
    alias_of: str | None = None
    alias_offset: int = 0
    """Bytes into ``alias_of``'s memory where this view starts (a Split output viewing one slab of its input)."""
    producer: str | None = None
    consumers: list[str] = field(default_factory=list)
    offset: int | None = None
    memory_level: str | None = None

    @property
    def numel(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def size_bytes(self) -> int:
        """Bytes of storage (for aliases: the bytes of the view)."""
        return self.numel * self.dtype.size

    @property
    def is_constant(self) -> bool:
        return self.kind is BufferKind.CONSTANT

    @property
    def in_arena(self) -> bool:
        """Whether the buffer needs its own place in the activation arena."""
        return self.kind in (BufferKind.INPUT, BufferKind.OUTPUT, BufferKind.ACTIVATION, BufferKind.TRANSIENT)
