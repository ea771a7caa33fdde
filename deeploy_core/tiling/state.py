"""What a tiler computed for one compile, as a typed result other extensions can read.

The tiler's products — tiles and kernel variants per layer, where each layer's
buffers sit in the compute level, how a cluster's cores share each tile, the
level's memory map and peak — are needed after tiling by the code the tiler
contributes to the chain, by the report and by platform extensions (the
cluster's cost model).  They travel as one :class:`TilingState` in
``compilation.results`` next to the :class:`~deeploy_core.tiling.solution.TilingSolution`
they were derived from, instead of as loose attributes on a deployer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_core.tiling.fusion.boxes import PatternCost
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.memory_map import LevelMap
from deeploy_core.tiling.parallel import LayerSplit
from deeploy_core.tiling.tiles import TiledLayer


@dataclass
class TilingTimes:
    """Where the tiler's time went (seconds); reported in timings.json, never in report.json."""

    model_build: float = 0.0
    solve: float = 0.0
    allocation: float = 0.0


@dataclass
class TilingState:
    """The tiles, layouts, core splits and compute-level map of every tiled layer (layers keyed by C name)."""

    tiled_layers: list[TiledLayer] = field(default_factory=list)
    """Every tiled layer with its tiles and kernel variants, in layer order."""
    layouts: dict[str, LayerLayout] = field(default_factory=dict)
    """Where each layer's table, tile buffers and scratch sit in the compute level."""
    splits: dict[str, LayerSplit] = field(default_factory=dict)
    """How a cluster's cores share each layer's tiles (empty on a single-core platform)."""
    level_maps: dict[str, LevelMap] = field(default_factory=dict)
    """The memory map of every level the tiler filled, by level name."""
    level_peak: int = 0
    """Bytes of the compute level the tiled code uses (the largest layer's layout, aligned)."""
    placement_orders: dict[str, list[str]] = field(default_factory=dict)
    """Block order per layer when a co-optimising allocator placed the blocks inside the tiling model."""
    patterns: list[FusedPattern] = field(default_factory=list)
    """The fused patterns of two or more layers (empty with ``--fusion none``), in execution order."""
    pattern_costs: dict[str, PatternCost] = field(default_factory=dict)
    """Per pattern (keyed by its last layer), the traffic and halo recomputation of its tiling."""
    times: TilingTimes = field(default_factory=TilingTimes)
    """Seconds spent building the model, solving it and placing the blocks."""
