"""The tiler's own check of a tiling, independent of how it was found (solved, or read with --tiling-from).

Every output element must be written by exactly one tile and every box must
lie inside its tensor.  In a fused pattern an intermediate tensor is not
written whole but per tile: there each tile of its producer must write at
least the box its consumer reads in the same tile.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.tiles import TiledLayer, box_shape


def check_tiles(tiled_layers: Sequence[TiledLayer], patterns: Sequence[FusedPattern], ctxt: NetworkContext) -> None:
    """Raise a :class:`DeeployError` naming the layer whose tiles are wrong."""
    consumers = {pattern.layers[k].c_name: (pattern.layers[k + 1].c_name, pattern.links[k])
                 for pattern in patterns for k in range(len(pattern.layers) - 1)}
    by_name = {tiled.layer.c_name: tiled for tiled in tiled_layers}
    for tiled in tiled_layers:
        node = tiled.layer.node
        outputs = [t for t in node.outputs if t.name]
        if tiled.layer.c_name in consumers:
            consumer, link = consumers[tiled.layer.c_name]
            reads = [tile.inputs[link] for tile in by_name[consumer].tiles]
            if len(reads) != len(tiled.tiles) or any(
                    box is None or any(not (a <= c and d <= b) for (a, b), (c, d) in zip(tile.outputs[0], box))
                    for tile, box in zip(tiled.tiles, reads)):
                raise DeeployError(f"fused tiling of layer {tiled.layer.name!r} does not compute what "
                                   f"{by_name[consumer].layer.name!r} reads")
            outputs = []
        for index, tensor in enumerate(outputs):
            shape = ctxt[tensor.name].shape
            covered = sum(math.prod(box_shape(tile.outputs[index])) for tile in tiled.tiles)
            if covered != math.prod(shape):
                raise DeeployError(f"tiling of layer {tiled.layer.name!r} covers {covered} of {math.prod(shape)} "
                                   f"elements of {tensor.name!r}")
            boxes = {tile.outputs[index] for tile in tiled.tiles}
            if len(boxes) != len(tiled.tiles):
                raise DeeployError(f"tiling of layer {tiled.layer.name!r} writes a box of {tensor.name!r} twice")
        for tile in tiled.tiles:
            for index, box in enumerate(tile.inputs):
                if box is None:
                    continue
                shape = ctxt[node.inputs[index].name].shape
                if len(box) != len(shape) or any(not 0 <= a <= b <= d for (a, b), d in zip(box, shape)):
                    raise DeeployError(f"tiling of layer {tiled.layer.name!r} reads outside {node.inputs[index].name!r}")
