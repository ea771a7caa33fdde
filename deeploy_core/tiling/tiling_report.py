"""The tiler's parts of ``report.json``: ``memory_levels`` (per level its capacity and use) and ``tiling``.

Pure functions of what the tiling computed (:class:`~deeploy_core.tiling.state.TilingState`)
and the compile's context, so that the wrapper only hands them over.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.tiling.fusion.boxes import pattern_entry
from deeploy_core.tiling.layer_layout import bytes_moved
from deeploy_core.tiling.outer_level import OuterLevelPlacement
from deeploy_core.tiling.parallel import ClusterParallelism
from deeploy_core.tiling.report_entries import buffer_entry, cluster_entry
from deeploy_core.tiling.solution import TilingSolution
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiler_options import TilerOptions


def memory_level_report(state: TilingState, ctxt: NetworkContext, hierarchy: MemoryHierarchy, arena_bytes: int,
                        outer: OuterLevelPlacement | None, capacity: int, buffering: str) -> dict[str, dict[str, Any]]:
    """Per level its capacity and bytes used (arena, tables, static data): home, the compute level, and L3."""
    report: dict[str, dict[str, Any]] = {}
    weights = sum(b.size_bytes for b in ctxt if b.kind is BufferKind.CONSTANT)
    weights -= outer.static_bytes if outer is not None else 0
    tables = sum(layout.table_bytes for layout in state.layouts.values())  # every constant array lives at home
    home = hierarchy.default_level
    if outer is not None:
        report[outer.level] = outer.usage()
    report[home] = {"capacity": hierarchy.level(home).size, "arena": arena_bytes, "tables": tables,
                    "static": weights, "used": arena_bytes + tables + weights}
    level_tables = max((layout.table_bytes for layout in state.layouts.values() if layout.table_offset is not None),
                       default=0)
    report[hierarchy.compute_level] = {"capacity": capacity, "arena": state.level_peak, "tables": level_tables,
                                       "static": 0, "used": state.level_peak, "buffering": buffering}
    return report


def layer_offsets(state: TilingState, level: str, layer_name: str) -> dict[str, int]:
    """Offsets in the compute level of one layer's blocks, by block name."""
    prefix = f"{layer_name}/"
    return {b.name[len(prefix):]: b.offset for b in state.level_maps[level].blocks if b.name.startswith(prefix)}


def tiling_report(state: TilingState, ctxt: NetworkContext, hierarchy: MemoryHierarchy, solution: TilingSolution,
                  options: TilerOptions, parallelism: ClusterParallelism | None,
                  whole_axes_of: Callable[[Layer], dict[int, str]]) -> dict[str, Any]:
    """``report["tiling"]``: per tiled layer its tiles, traffic, buffers, tables and whole axes; the patterns."""
    level = hierarchy.compute_level
    layers = []
    for tiled in state.tiled_layers:
        layout = state.layouts[tiled.layer.c_name]
        fetched, stored = bytes_moved(tiled, ctxt, layout.local_inputs | layout.home_inputs, layout.local_outputs)
        split = state.splits.get(tiled.layer.c_name)
        layers.append({
            "layer": tiled.layer.name, "key": tiled.layer.c_name, "op": tiled.layer.op_type, "tiles": len(tiled.tiles),
            "variants": len(tiled.variants), "tile": {str(a): s for a, s in sorted(tiled.tile_sizes.items())},
            "bytes_in": fetched, "bytes_out": stored, "level_bytes": layout.peak,
            "table_bytes": layout.table_bytes, "scratch_bytes": layout.scratch_bytes,
            "table_level": level if layout.table_offset is not None else hierarchy.default_level,
            "read_in_place": [tiled.layer.node.inputs[index].name for index in sorted(layout.home_inputs)],
            "whole_axes": {str(axis): why for axis, why in sorted(whole_axes_of(tiled.layer).items())},
            "buffering": options.buffering, "buffers": buffer_entry(layout),
            **(cluster_entry(tiled, split, parallelism.cores) if parallelism is not None else {})})
    return {
        "tiler": options.name, "strategy": options.strategy, "buffering": options.buffering,
        "compute_level": level, "solution": solution.to_json(),
        "memory_map": {name: dict(layer_offsets(state, level, name)) for name in sorted(state.layouts)},
        "layers": layers,
        "fusion": options.fusion,
        "patterns": [pattern_entry(pattern, state.pattern_costs[pattern.key]) for pattern in state.patterns],
    }

