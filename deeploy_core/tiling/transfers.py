"""How a platform moves tiles between memory levels, as C code templates.

The core's tiling code generation is platform-neutral: it decides *what* box of
which tensor moves where and when, and asks the platform *how* with these
templates.  A transfer returns a future; waiting on it is the only way the
generated code may read the destination (on a platform with a DMA engine the
copy runs asynchronously; on the host it is a plain copy and the wait is free).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TransferPrimitives:
    """C templates, filled with ``str.format``.

    ``to_tile``/``from_tile`` fields: ``future``, ``tile`` (pointer into the
    compute level), ``tensor`` (byte pointer to the box start in the home
    level), ``element_bytes``, ``rank``, ``box`` and ``strides`` (C arrays of
    the box shape and of the home tensor's element strides).
    """

    headers: tuple[str, ...]
    future_type: str
    to_tile: str
    from_tile: str
    wait: str
    level_declaration: str = "static union {{ {members} }} {name};"
    """The compute level as a static object, filled with ``bytes``, ``name`` and ``members`` (arrays of every
    element type of that size, :func:`deeploy_core.codegen.arena_views.union_members`: a tile of any type is then an
    object of its own type, as ISO C's effective-type rule asks); empty when the platform hands the level out."""
    level_pointer: str = "{name}.u8"


HOST_MEMCPY = TransferPrimitives(
    headers=("dcg_transfer.h",),
    future_type="int32_t",
    to_tile="{future} = dcg_copy_to_tile({tile}, {tensor}, {element_bytes}, {rank}, {box}, {strides});",
    from_tile="{future} = dcg_copy_from_tile({tensor}, {tile}, {element_bytes}, {rank}, {box}, {strides});",
    wait="dcg_transfer_wait({future});",
)
"""Synchronous copies on the host (the generic C platform's tiled mode)."""
