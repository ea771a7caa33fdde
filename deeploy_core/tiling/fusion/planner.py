"""The tiler's side of fusion: which adjacent layers may share a pattern, what a pattern costs, and its tiles.

:class:`FusionPlanner` starts from the layer-wise solution (every layer a
pattern of its own, with the tile CP-SAT chose for it) and runs
:class:`~deeploy_core.tiling.fusion.transformation.FuseAdjacentPatterns`
with :meth:`FusionPlanner.judge` as its cost: a merged pattern is kept only
if its CP-SAT model fits the compute level, it moves strictly fewer bytes
than its two parts did, and it recomputes at most
:data:`MAX_HALO_OVERHEAD` of its intermediate tensors.  So fusion never adds
traffic, and a network where nothing pays keeps its layer-wise tiling.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.tiling.cp_model import LayerModel, solve_tiling
from deeploy_core.tiling.fusion.boxes import PatternCost, pattern_boxes, pattern_cost, producers_compute_their_boxes
from deeploy_core.tiling.fusion.model import pattern_model
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.fusion.transformation import FuseAdjacentPatterns, PatternGraph, Verdict
from deeploy_core.tiling.geometry import TileConstraint
from deeploy_core.tiling.solution import PatternTiling
from deeploy_core.tiling.tiles import TiledLayer, box_shape, tiles_from_boxes

MAX_PATTERN_LAYERS = 6
"""Longer chains multiply halos and the kernel variants of their first layers; six covers conv-dw-pw blocks."""
MAX_HALO_OVERHEAD = 0.5
"""The most of an intermediate tensor a pattern may compute twice (halos of neighbouring tiles), as a fraction."""


@dataclass
class FusionPlanner:
    """Fuses the tiled layers of one compile (``layers`` in execution order, with their models and constraints)."""

    ctxt: NetworkContext
    layers: Sequence[Layer]
    models: dict[str, LayerModel]
    constraints: dict[str, TileConstraint]
    graph_outputs: set[str]
    slots: int
    seed: int = 0
    time_limit: float = 10.0
    every_layer: Sequence[Layer] = ()
    """All layers of the network, views included (default: ``layers``): a view reading a tensor is a reader too."""
    unfusable: frozenset[str] = frozenset()
    """Layers (C names) that read constants in place from the home level: their loop is the layer's own."""
    _readers: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        for layer in self.every_layer or self.layers:
            self._readers.update({t.name for t in layer.node.inputs if t.name})

    def plan(self, layer_tiles: dict[str, dict[int, int]]) -> list[tuple[FusedPattern, dict[int, int]]]:
        """Every pattern of two or more layers with its tile (the last layer's output tile sizes)."""
        graph = PatternGraph([FusedPattern((layer,)) for layer in self.layers])
        for pattern in graph.patterns:
            tile = layer_tiles[pattern.key]
            graph.tiles[pattern.names] = tile
            graph.costs[pattern.names] = self.cost(pattern, tile)
        FuseAdjacentPatterns(self.judge).apply_pass(graph, {})
        return [(pattern, graph.tiles[pattern.names]) for pattern in graph.patterns if len(pattern.layers) > 1]

    def constraints_of(self, pattern: FusedPattern) -> list[TileConstraint]:
        return [self.constraints[name] for name in pattern.names]

    def cost(self, pattern: FusedPattern, tile: dict[int, int]) -> PatternCost:
        return pattern_cost(pattern, self.ctxt, pattern_boxes(pattern, self.ctxt, self.constraints_of(pattern), tile))

    def computable(self, pattern: FusedPattern, tile: dict[int, int]) -> bool:
        """Every producer of the pattern is asked, for this tile size, only for boxes it can compute alone."""
        constraints = self.constraints_of(pattern)
        return producers_compute_their_boxes(pattern, self.ctxt, constraints,
                                             pattern_boxes(pattern, self.ctxt, constraints, tile))

    def link(self, producer: Layer, consumer: Layer) -> int | None:
        """The consumer's input that reads the producer's output, if the two may share a pattern.

        They must run back to back, each with one output, and the producer's
        output must be read by the consumer alone, once, and not be a network
        output: only then can it live in the compute level and nowhere else.
        """
        if consumer.index != producer.index + 1 or {producer.c_name, consumer.c_name} & self.unfusable:
            return None
        outputs = [t for t in producer.node.outputs if t.name]
        if len(outputs) != 1 or len([t for t in consumer.node.outputs if t.name]) != 1:
            return None
        name = outputs[0].name
        if name in self.graph_outputs or self._readers[name] != 1:
            return None
        reads = [index for index, tensor in enumerate(consumer.node.inputs) if tensor.name == name]
        return reads[0] if len(reads) == 1 else None

    def judge(self, first: FusedPattern, second: FusedPattern, graph: PatternGraph) -> Verdict | None:
        link = self.link(first.layers[-1], second.layers[0])
        if link is None or len(first.layers) + len(second.layers) > MAX_PATTERN_LAYERS:
            return None
        merged = first.merged(second, link)
        if not self.computable(merged, {}):
            return None
        separate = graph.costs[first.names].traffic + graph.costs[second.names].traffic
        if self.cost(merged, {}).traffic >= separate:
            return None  # even as one tile (no halo, nothing fetched twice) it would not move fewer bytes
        model = pattern_model(merged, [self.models[name] for name in merged.names], self.slots)
        if model is None:
            return None
        # Fewest tiles: the largest tiles have the smallest halos, whatever objective the layers used.
        result = solve_tiling([model], "max", self.seed, self.time_limit)
        if result.tiles is None:
            return None
        tile = result.tiles[model.name]
        if not self.computable(merged, tile):
            return None
        cost = self.cost(merged, tile)
        if cost.traffic >= separate:
            return None
        if cost.halo_overhead > MAX_HALO_OVERHEAD:
            return None
        return Verdict(merged, tile, cost)

    def apply(self, entries: Sequence[PatternTiling], tiled_layers: list[TiledLayer], candidates: Sequence[Layer]
              ) -> list[tuple[FusedPattern, PatternCost]]:
        """A solution's patterns (solved now or read back with --tiling-from), checked and built: each pattern's
        layers get its tiles in ``tiled_layers`` (in place); returns the patterns with their costs."""
        by_name = {layer.c_name: layer for layer in candidates}
        position = {tiled.layer.c_name: index for index, tiled in enumerate(tiled_layers)}
        built = []
        for entry in entries:
            if any(name not in by_name for name in entry.layers):
                raise DeeployError(f"the tiling solution fuses unknown layers {list(entry.layers)}")
            pattern = FusedPattern((by_name[entry.layers[0]],))
            for name in entry.layers[1:]:
                link = self.link(pattern.layers[-1], by_name[name])
                if link is None:
                    raise DeeployError(f"the tiling solution fuses layers {list(entry.layers)}, which cannot share a pattern")
                pattern = pattern.merged(FusedPattern((by_name[name],)), link)
            for tiled in self.tiled_layers(pattern, entry.tile):
                tiled_layers[position[tiled.layer.c_name]] = tiled
            built.append((pattern, self.cost(pattern, entry.tile)))
        return built

    def tiled_layers(self, pattern: FusedPattern, tile: dict[int, int]) -> list[TiledLayer]:
        """Tiles and kernel variants of every layer of ``pattern``: all layers have one tile per pattern tile."""
        boxes = pattern_boxes(pattern, self.ctxt, self.constraints_of(pattern), tile)
        tiled = []
        for position, layer in enumerate(pattern.layers):
            sizes = tile if position == len(pattern.layers) - 1 else _largest_box(boxes[position])
            tiled.append(tiles_from_boxes(layer, self.ctxt, self.constraints[layer.c_name], boxes[position], sizes))
        return tiled


def _largest_box(boxes: Sequence[tuple[tuple[tuple[int, int], ...], object]]) -> dict[int, int]:
    """An earlier layer's tile sizes as the report shows them: the largest extent per axis over its tiles."""
    shapes = [box_shape(out) for out, _ in boxes]
    return {axis: max(shape[axis] for shape in shapes) for axis in range(len(shapes[0]))}
