"""The boxes every layer of a pattern reads and writes per tile, and what they cost in traffic and recomputation.

Tiles are the last layer's output grid; going backwards, each layer's output
box is the box its consumer reads of the intermediate (halo included), and
its input boxes follow from its own geometry.  From those boxes alone (no
kernel is parsed) the tiler prices a pattern: the bytes moved between the
home level and the compute level, and how much of each intermediate tensor is
computed more than once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.geometry import Box, TileConstraint
from deeploy_core.tiling.tiles import box_shape, output_boxes

TileBoxes = tuple[Box, tuple[Box | None, ...]]
"""One layer's part of one tile: its output box and the box of every input (None for absent ones)."""


def pattern_boxes(pattern: FusedPattern, ctxt: NetworkContext, constraints: Sequence[TileConstraint],
                  tile: dict[int, int]) -> list[list[TileBoxes]]:
    """Per layer of ``pattern`` (in order), per tile, the boxes it writes and reads."""
    last = pattern.layers[-1]
    out_shape = ctxt[next(t for t in last.node.outputs if t.name).name].shape
    per_layer: list[list[TileBoxes]] = [[] for _ in pattern.layers]
    outs = output_boxes(out_shape, tile)
    for position in range(len(pattern.layers) - 1, -1, -1):
        layer, constraint = pattern.layers[position], constraints[position]
        per_layer[position] = [(out, tuple(constraint.input_boxes(layer.node, ctxt, out))) for out in outs]
        if position:
            link = pattern.links[position - 1]
            outs = [inputs[link] for _, inputs in per_layer[position]]  # type: ignore[misc]
    return per_layer


def producers_compute_their_boxes(pattern: FusedPattern, ctxt: NetworkContext, constraints: Sequence[TileConstraint],
                                  boxes: list[list[TileBoxes]]) -> bool:
    """Whether every layer but the last is asked only for boxes its own tiling can compute.

    A consumer may read part of an axis its producer never cuts (a Slice or
    Gather after a Softmax reads a range of the softmax's axis): the producer
    would then compute a partial row on its own, which is another result, so
    such a pair must not share a pattern.
    """
    for position, layer in enumerate(pattern.layers[:-1]):
        shape = ctxt[next(t for t in layer.node.outputs if t.name).name].shape
        cut = set(constraints[position].tiled_axes(layer.node, ctxt))
        for out, _ in boxes[position]:
            if any(axis not in cut and (start, stop) != (0, dim)
                   for axis, ((start, stop), dim) in enumerate(zip(out, shape))):
                return False
    return True


@dataclass(frozen=True)
class PatternCost:
    """What one inference of a pattern costs: bytes fetched and stored, and intermediate elements recomputed."""

    fetched: int
    stored: int
    computed: int
    """Elements of the intermediate tensors computed over all tiles (halos counted as often as computed)."""
    intermediate: int
    """Elements of the intermediate tensors that some tile computes (a strided consumer may skip some)."""
    tiles: int

    @property
    def traffic(self) -> int:
        return self.fetched + self.stored

    @property
    def halo_overhead(self) -> float:
        """The fraction of intermediate elements computed more than once (0 when tiles do not overlap)."""
        return max(0.0, self.computed / self.intermediate - 1.0) if self.intermediate else 0.0


def _box_bytes(box: Box | None, element_bytes: int) -> int:
    return math.prod(box_shape(box)) * element_bytes if box is not None else 0


def _covered(boxes: list[Box]) -> int:
    """Elements in the union of ``boxes``, taken as the product of each axis's covered length.

    A pattern's boxes come from a grid of output tiles, and each axis of an
    input box follows one axis of the output, so they form a grid too and the
    union is that product.
    """
    total = 1
    for axis in range(len(boxes[0])):
        covered, end = 0, None
        for start, stop in sorted({box[axis] for box in boxes}):
            begin = start if end is None else max(start, end)
            covered += max(0, stop - begin)
            end = stop if end is None else max(end, stop)
        total *= covered
    return total


def pattern_cost(pattern: FusedPattern, ctxt: NetworkContext, boxes: list[list[TileBoxes]]) -> PatternCost:
    """Bytes moved (an input whose box is the same in every tile is fetched once) and recomputation."""
    fetched = stored = computed = intermediate = 0
    for position, layer in enumerate(pattern.layers):
        local = pattern.local_inputs(position)
        tiles = boxes[position]
        for index, tensor in enumerate(layer.node.inputs):
            if not tensor.name or index in local:
                continue
            size = ctxt[tensor.name].dtype.size
            in_boxes = [inputs[index] for _, inputs in tiles]
            if len(set(in_boxes)) == 1:
                in_boxes = in_boxes[:1]
            fetched += sum(_box_bytes(box, size) for box in in_boxes)
        output = ctxt[next(t for t in layer.node.outputs if t.name).name]
        if position == len(pattern.layers) - 1:
            stored += sum(_box_bytes(out, output.dtype.size) for out, _ in tiles)
        else:
            computed += sum(math.prod(box_shape(out)) for out, _ in tiles)
            intermediate += _covered([out for out, _ in tiles])
    return PatternCost(fetched, stored, computed, intermediate, len(boxes[-1]))


def pattern_entry(pattern: FusedPattern, cost: PatternCost) -> dict[str, Any]:
    """report.json's entry of a fused pattern: its layers, tile count, bytes moved and halo recomputation."""
    return {"layers": [layer.name for layer in pattern.layers], "keys": list(pattern.names),
            "ops": [layer.op_type for layer in pattern.layers], "tiles": cost.tiles, "bytes_in": cost.fetched,
            "bytes_out": cost.stored, "halo_overhead": round(cost.halo_overhead, 6)}
