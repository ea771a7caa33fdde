"""Where one tiled layer's buffers sit in the compute level, and what its tiles move in and out of it.

Layout of one layer in the compute level (offsets from the level's static
memory map): the tile table (copied in at the start of the layer, because the
loop reads it from there), one buffer per input/output tile and buffering
slot, and the kernels' scratch.  Tensors whose box is the same for every tile
(weights of a spatially tiled convolution, scalars) are *resident*: one
buffer, fetched once before the tile loop.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.tiles import TiledLayer


@dataclass
class LayerLayout:
    """Where one tiled layer's buffers sit in the compute level (byte offsets) and what it moves."""

    table_offset: int | None
    """Where the table's copy sits in the compute level; None: the table is read in place from the home level."""
    table_bytes: int
    inputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    """input index → (offset, bytes per slot)."""
    outputs: dict[int, tuple[int, int]] = field(default_factory=dict)
    scratch: dict[str, int] = field(default_factory=dict)
    scratch_strides: dict[str, int] = field(default_factory=dict)
    """scratch key → bytes between two cores' copies (cluster platforms; 0 or absent: one copy)."""
    scratch_bytes: int = 0
    """Compute-level bytes of the kernel's scratch (its largest tile's, every core's copy): report.json's figure."""
    resident: set[int] = field(default_factory=set)
    local_inputs: set[int] = field(default_factory=set)
    """Inputs a fused pattern's previous layer computes into the compute level: one buffer, never fetched."""
    local_outputs: set[int] = field(default_factory=set)
    """Outputs the pattern's next layer reads from the compute level: one buffer, never stored."""
    home_inputs: set[int] = field(default_factory=set)
    """Constant inputs the kernel reads in place from the home level (:mod:`deeploy_core.tiling.home_inputs`):
    no buffer in the compute level, never fetched."""
    slots: int = 1
    peak: int = 0


def slot_pointer(level_pointer: str, offset: int, stride: int, slot: str, c_type: str = "uint8_t") -> str:
    """A ``c_type *`` C expression of buffering slot ``slot`` (a C expression) of the buffer at ``offset`` of the
    compute level, ``stride`` bytes per slot: the transfers and the kernels address a tile's buffer alike."""
    return f"(({c_type} *)({level_pointer} + {offset} + {slot} * {stride}))"


def resident_inputs(tiled: TiledLayer) -> set[int]:
    """Inputs whose box never changes from tile to tile."""
    resident = set()
    for index, tensor in enumerate(tiled.layer.node.inputs):
        if not tensor.name:
            continue
        boxes = {tile.inputs[index] for tile in tiled.tiles}
        if len(boxes) == 1:
            resident.add(index)
    return resident


def bytes_moved(tiled: TiledLayer, ctxt: NetworkContext, local_inputs: frozenset[int] | set[int] = frozenset(),
                local_outputs: frozenset[int] | set[int] = frozenset()) -> tuple[int, int]:
    """(bytes fetched into the compute level, bytes stored back) for one inference; a fused pattern's
    intermediate tiles (``local_inputs``/``local_outputs``) move nothing, nor do inputs read in place (pass
    them in ``local_inputs`` too)."""
    node = tiled.layer.node
    resident = resident_inputs(tiled)
    fetched = stored = 0
    for index, tensor in enumerate(node.inputs):
        if not tensor.name or index in local_inputs:
            continue
        size = ctxt[tensor.name].dtype.size
        boxes = [tile.inputs[index] for tile in tiled.tiles]
        if index in resident:
            boxes = boxes[:1]
        fetched += sum(math.prod(b - a for a, b in box) * size for box in boxes if box is not None)
    outputs = [t for t in node.outputs if t.name]
    for index, tensor in enumerate(outputs):
        if index in local_outputs:
            continue
        size = ctxt[tensor.name].dtype.size
        stored += sum(math.prod(b - a for a, b in tile.outputs[index]) * size for tile in tiled.tiles)
    return fetched, stored
