"""A read-only view of a compile's tiling: what each tiled layer moves per tile and what each core computes.

A platform plugin that estimates or checks a tiled network (the cluster's cost
model) needs the tiler's results, but not its internals: how the tiler stores
tiles, layouts, core splits and staging buffers changes with every refactor of
the tiler.  :meth:`TilingView.of` flattens those results into plain, frozen
numbers — for every tile, the shape of the box each tensor moves, or None when
it moves nothing — so that the plugin API exports one type instead of the
tiler's eight.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from deeploy_core.compilation import Compilation
from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Box
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.outer_level import OuterLevelPlacement
from deeploy_core.tiling.parallel import LayerSplit
from deeploy_core.tiling.staging import LayerStaging
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiles import TiledLayer, box_shape


@dataclass(frozen=True)
class TilingView:
    """Every tiled layer of a compile, in execution order, and the levels its tensors move between.

    Its parts are nested (``TilingView.Layer``, ``TilingView.Tensor``): they exist only as parts of a view.
    """

    @dataclass(frozen=True)
    class Tensor:
        """One tensor of a tiled layer as its transfers see it."""

        shape: tuple[int, ...]
        """The whole tensor's shape where it is stored (a box's rows are strided by it)."""
        element_bytes: int
        boxes: tuple[tuple[int, ...] | None, ...]
        """Per tile, the shape of the box that moves between the home and the compute level; None where nothing moves
        (a fused pattern's intermediate, a constant read in place, a resident input after its first tile)."""
        resident: bool
        """Fetched once, with the first tile, and kept for the others (an input whose box never changes)."""
        staged: bool
        """Lives beyond home (L3): each box is staged through the home level, one dense transfer from there."""

        def bytes_of(self, tile: int) -> int:
            """Bytes this tensor moves for tile ``tile``."""
            box = self.boxes[tile]
            return 0 if box is None else math.prod(box) * self.element_bytes

    @dataclass(frozen=True)
    class Layer:
        """One tiled layer: its tensors' moves per tile, its buffering and each core's work per tile."""

        name: str
        """The layer's name (its ONNX node's, or the pattern's for a fused lowering)."""
        key: str
        """The layer's C name (report.json's ``key``)."""
        inputs: tuple[TilingView.Tensor, ...]
        outputs: tuple[TilingView.Tensor, ...]
        slots: int
        """Buffers per streamed tensor in the compute level: 1 single buffering, 2 double buffering."""
        staging_pipelined: bool
        """Whether the staged tensors' outer hop is double buffered (the outer level's transfers overlap compute)."""
        forked: bool
        """False for a layer of a fused pattern other than its last: it runs inside its pattern's fork."""
        core_work: tuple[tuple[int, ...], ...]
        """Per tile, each core's work (MACs, or output elements for kernels without MACs); one core: one entry."""

        @property
        def tiles(self) -> int:
            return len(self.core_work)

    layers: tuple[TilingView.Layer, ...]
    cores: int
    outer_level: str | None
    """The level beyond home that staged tensors live in (``L3``), or None when every tensor is at home."""
    home_level: str | None
    """The level staged tensors pass through (``L2``), or None as above."""

    @classmethod
    def of(cls, compilation: Compilation, cores: int = 1) -> TilingView | None:
        """The view of ``compilation``'s tiling with ``cores`` cores sharing each tile; None when it was not tiled."""
        state = compilation.results.get(TilingState)
        if state is None:
            return None
        outer = compilation.results.get(OuterLevelPlacement)
        staging = outer.staging if outer is not None else {}
        layers = tuple(_layer_view(tiled, compilation.ctxt, state.layouts[tiled.layer.c_name],
                                   state.splits.get(tiled.layer.c_name), staging.get(tiled.layer.c_name), cores)
                       for tiled in state.tiled_layers)
        return cls(layers, cores, outer.level if outer is not None else None, outer.home if outer is not None else None)


def _layer_view(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, split: LayerSplit | None,
                staging: LayerStaging | None, cores: int) -> TilingView.Layer:
    node = tiled.layer.node
    staged_in = staging.inputs if staging is not None else {}
    staged_out = staging.outputs if staging is not None else {}
    inputs = []
    for index, tensor in enumerate(node.inputs):
        if not tensor.name:
            continue
        never_moves = index in layout.local_inputs | layout.home_inputs
        resident = index in layout.resident
        boxes = tuple(None if never_moves or (resident and number > 0) else _shape(tile.inputs[index])
                      for number, tile in enumerate(tiled.tiles))
        inputs.append(_moves(ctxt, tensor.name, boxes, resident, index in staged_in))
    outputs = []
    for index, tensor in enumerate(t for t in node.outputs if t.name):
        boxes = tuple(None if index in layout.local_outputs else _shape(tile.outputs[index]) for tile in tiled.tiles)
        outputs.append(_moves(ctxt, tensor.name, boxes, False, index in staged_out))
    sharing = split or LayerSplit([None] * len(tiled.variants))
    work = tuple(tuple(sharing.tile_work(tiled, tile, cores)) for tile in tiled.tiles)
    return TilingView.Layer(tiled.layer.name, tiled.layer.c_name, tuple(inputs), tuple(outputs), layout.slots,
                           staging is not None and staging.pipelined, not layout.local_outputs, work)


def _shape(box: Box | None) -> tuple[int, ...] | None:
    return None if box is None else box_shape(box)


def _moves(ctxt: NetworkContext, name: str, boxes: tuple[tuple[int, ...] | None, ...], resident: bool,
           staged: bool) -> TilingView.Tensor:
    buffer = ctxt[name]
    return TilingView.Tensor(tuple(buffer.shape), buffer.dtype.size, boxes, resident, staged)
