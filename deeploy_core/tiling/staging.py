"""Staging buffers: where a tile of a tensor living beyond the home level waits in the home level, and its C copies.

A tensor that the home level (L2) cannot hold lives in the level beyond it
(L3, :mod:`deeploy_core.tiling.outer_level`).  Its tiles reach the compute
level (L1) in two hops through a *staging buffer* of the home arena, the size
of the tensor's largest tile: outer → staging (strided in the tensor, dense in
the buffer), then staging → compute level (dense on both sides: one
transfer); a store goes the reverse way.  This module holds the buffers'
description and the C statements of both hops, built from the platform's
transfer primitives, for the layer-wise, fused and pipelined schedules alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_core.tiling.strides import element_strides
from deeploy_core.tiling.transfers import TransferPrimitives

HOME_BASE = "DC_ARENA_BASE"
"""The home arena's base in Network.c (``deeploy_core.codegen.network_files``): the staging buffers are arena blocks."""


@dataclass(frozen=True)
class StagedBuffer:
    """A staging buffer in the home arena: ``slots`` slots of ``slot_bytes`` from ``offset`` (arena bytes)."""

    offset: int
    slot_bytes: int
    slots: int

    def pointer(self, slot: str) -> str:
        """A ``uint8_t *`` C expression of slot ``slot`` (a C expression) of the buffer."""
        return f"((uint8_t *)({HOME_BASE} + {self.offset} + {slot} * {self.slot_bytes}))"

    def to_json(self) -> dict[str, int]:
        return {"offset": self.offset, "slots": self.slots, "slot_bytes": self.slot_bytes}


@dataclass
class LayerStaging:
    """The staging buffers of one tiled layer's tensors that live beyond home, by input and present-output index."""

    inputs: dict[int, StagedBuffer] = field(default_factory=dict)
    outputs: dict[int, StagedBuffer] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.inputs or self.outputs)

    @property
    def pipelined(self) -> bool:
        """Whether the layer's streamed staged tensors have two slots (the outer hop double buffered)."""
        return any(buffer.slots == 2 for buffer in (*self.inputs.values(), *self.outputs.values()))

    def to_json(self) -> dict[str, dict[str, int]]:
        return {**{f"in{i}": b.to_json() for i, b in sorted(self.inputs.items())},
                **{f"out{i}": b.to_json() for i, b in sorted(self.outputs.items())}}


def _int_array(values: tuple[int, ...] | list[int]) -> str:
    return "(const int32_t[]){" + (", ".join(str(int(v)) for v in values) or "0") + "}"


def box_copy(template: str, future: str, tile: str, tensor: str, element_bytes: int, shape: tuple[int, ...],
             tensor_shape: tuple[int, ...] | None) -> str:
    """One box transfer of the platform: ``tile`` is the dense side, ``tensor`` the side with the strides of
    ``tensor_shape`` (None: dense too, the box's own strides)."""
    strides = element_strides(shape if tensor_shape is None else tensor_shape)
    return template.format(future=future, tile=tile, tensor=tensor, element_bytes=element_bytes, rank=len(shape),
                           box=_int_array(shape), strides=_int_array(strides))


def fetch_hops(primitives: TransferPrimitives, future: str, outer_future: str, tile: str, staging: str, tensor: str,
               element_bytes: int, shape: tuple[int, ...], tensor_shape: tuple[int, ...]) -> tuple[str, list[str]]:
    """(outer -> staging transfer, [wait for it, staging -> compute-level transfer]) of one box."""
    outer = box_copy(primitives.to_tile, outer_future, staging, tensor, element_bytes, shape, tensor_shape)
    return outer, [primitives.wait.format(future=outer_future),
                   box_copy(primitives.to_tile, future, tile, staging, element_bytes, shape, None)]


def store_hops(primitives: TransferPrimitives, future: str, outer_future: str, tile: str, staging: str, tensor: str,
               element_bytes: int, shape: tuple[int, ...], tensor_shape: tuple[int, ...]) -> list[str]:
    """Wait until the staging slot's previous outer transfer is done, move the tile into it, wait, and start the
    staging -> outer transfer (its future is ``outer_future``)."""
    return [primitives.wait.format(future=outer_future),
            box_copy(primitives.from_tile, future, tile, staging, element_bytes, shape, None),
            primitives.wait.format(future=future),
            box_copy(primitives.from_tile, outer_future, staging, tensor, element_bytes, shape, tensor_shape)]


def synchronous_fetch(primitives: TransferPrimitives, future: str, tile: str, staging: str, tensor: str,
                      element_bytes: int, shape: tuple[int, ...], tensor_shape: tuple[int, ...]) -> list[str]:
    """Both hops of a fetch with one future: the outer hop is waited for at once (single buffering of it); the
    future then holds the staging -> compute-level transfer, which the schedule waits for as usual."""
    outer, rest = fetch_hops(primitives, future, future, tile, staging, tensor, element_bytes, shape, tensor_shape)
    return [outer, *rest]


def synchronous_store(primitives: TransferPrimitives, future: str, tile: str, staging: str, tensor: str,
                      element_bytes: int, shape: tuple[int, ...], tensor_shape: tuple[int, ...]) -> list[str]:
    """Both hops of a store with one future, each waited for at once (the staging slot is free again after it)."""
    hops = store_hops(primitives, future, future, tile, staging, tensor, element_bytes, shape, tensor_shape)
    return [*hops[1:], primitives.wait.format(future=future)]
