"""The network context: the symbol table of every buffer the generated code uses."""

from __future__ import annotations

from typing import Iterator

import numpy as np

from deeploy_core.errors import DeeployError
from deeploy_core.ir.buffers import Buffer, BufferKind
from deeploy_core.ir.dtypes import DataType
from deeploy_core.ir.names import CNameMangler

_KIND_PREFIX = {
    BufferKind.INPUT: "in",
    BufferKind.OUTPUT: "out",
    BufferKind.ACTIVATION: "act",
    BufferKind.CONSTANT: "w",
    BufferKind.TRANSIENT: "tmp",
    BufferKind.ALIAS: "view",
}


class NetworkContext:
    """Buffers by ONNX name, in insertion order (which is deterministic: graph order)."""

    def __init__(self, name_prefix: str = "dc") -> None:
        self._buffers: dict[str, Buffer] = {}
        self.mangler = CNameMangler(name_prefix)  # a --prefix keeps two networks' weights apart at link time
        self.graph_inputs: list[str] = []
        self.graph_outputs: list[str] = []
        self.for_tiles = False
        """True when a tiler runs the layers tile by tile in a small compute level (set before parsing): a kernel
        whose fast variant needs scratch that does not shrink with the tile (it is paid once per core, per tile)
        should then pick its plain variant.  Untiled builds keep the arena-backed fast variants."""

    def add(
        self,
        name: str,
        dtype: DataType,
        shape: tuple[int, ...],
        kind: BufferKind,
        values: np.ndarray | None = None,
        alias_of: str | None = None,
    ) -> Buffer:
        """Register a buffer; its C name is derived from ``name`` and ``kind``."""
        if name in self._buffers:
            raise DeeployError(f"tensor {name!r} is defined twice")
        buffer = Buffer(
            name=name,
            c_name=self.mangler.mangle(name, _KIND_PREFIX[kind]),
            dtype=dtype,
            shape=tuple(int(dim) for dim in shape),
            kind=kind,
            values=values,
            alias_of=alias_of,
        )
        self._buffers[name] = buffer
        return buffer

    def __getitem__(self, name: str) -> Buffer:
        return self._buffers[name]

    def __contains__(self, name: object) -> bool:
        return name in self._buffers

    def __iter__(self) -> Iterator[Buffer]:
        return iter(self._buffers.values())

    def of_kind(self, *kinds: BufferKind) -> list[Buffer]:
        """Buffers of the given kinds, in insertion order."""
        return [buffer for buffer in self._buffers.values() if buffer.kind in kinds]

    def view_offset(self, name: str) -> int:
        """Bytes from the start of :meth:`storage_of`'s memory to where ``name`` begins (views of views add up)."""
        offset, buffer = 0, self._buffers[name]
        for _ in range(len(self._buffers)):
            if buffer.alias_of is None:
                return offset
            offset += buffer.alias_offset
            buffer = self._buffers[buffer.alias_of]
        raise DeeployError(f"alias cycle through tensor {name!r}")

    def storage_of(self, name: str) -> Buffer:
        """The buffer that owns the memory of ``name`` (follows alias chains, detecting cycles)."""
        seen: list[str] = []
        buffer = self._buffers[name]
        while buffer.alias_of is not None:
            if buffer.name in seen:
                raise DeeployError(f"alias cycle through tensors {' -> '.join(seen + [buffer.name])}")
            seen.append(buffer.name)
            assert buffer.alias_of is not None
            buffer = self._buffers[buffer.alias_of]
        return buffer
