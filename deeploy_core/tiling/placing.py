"""Tiling's second half: from a solution to tiles, core splits, the compute level's map and every level's check.

:func:`tile` is what the tiler wrapper's ``bind`` runs.  It takes a solution
(solved now, or reused with its memory map from ``--tiling-from``), builds the
tiles of every layer and fused pattern, places them in the compute level with
the allocator, moves what the home level cannot hold beyond it, and checks
each level's capacity.  A fused tiling that fails where its layers alone would
fit falls back to layer-wise tiling, with a warning; so does a fused pattern
whose staged tensors the user asked to double buffer.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from deeploy_core.allocation.checked_solve import allocator_origin
from deeploy_core.errors import DeeployError
from deeploy_core.midend.memory_plan import plan_arena
from deeploy_core.tiling.diagnosis import layer_label
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.tiling.fusion.lifetimes import fused_lifetimes, intermediate_tensors
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.level_placement import LevelPlacer, check_level_maps
from deeploy_core.tiling.outer_level import OuterLevelPlacement, OuterLevelTooSmall, place_outer_level
from deeploy_core.tiling.parallel import split_layer
from deeploy_core.tiling.solution import TilingSolution
from deeploy_core.tiling.solving import home_inputs, planner, solve
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiler_setup import TilerSetup
from deeploy_core.tiling.tiles import TiledLayer, build_tiles
from deeploy_core.tiling.tiling_report import memory_level_report
from deeploy_core.tiling.verification import check_tiles

MemoryMap = dict[str, dict[str, int]]
"""A compute-level map exported by an earlier compile: per layer (C name), block name → byte offset."""


def tile(setup: TilerSetup, solution: TilingSolution | None = None, memory_map: MemoryMap | None = None) -> None:
    """Tile every layer: solve (or take ``solution``), build tiles, place them (or take ``memory_map``)."""
    if (solution is None) != (memory_map is None):
        raise DeeployError("tile() takes a tiling solution and a memory map together, or neither")
    compilation = setup.compilation
    compilation.results[TilingState] = TilingState()
    if solution is None:
        solution = solve(setup)
    elif solution.buffering != setup.options.buffering:
        raise DeeployError(f"the tiling to reuse was made with {solution.buffering} buffering but tiler "
                           f"{setup.options.name!r} uses {setup.options.buffering} buffering; use --buffering "
                           f"{solution.buffering} or drop --tiler")
    compilation.results[TilingSolution] = solution
    try:
        _place(setup, solution, memory_map)
        if memory_map is None:
            _unfuse_staged_patterns(setup)
    except DeeployError as error:
        if not solution.patterns or memory_map is not None:
            raise
        # A fused pattern the model let through can still fail where its layers alone fit (a kernel refusing a
        # halo tile's shape, the longer lifetimes overflowing the home level): tile layer by layer, and say so.
        compilation.warnings.append(f"fused tiling given up, every layer tiled alone: {error}")
        try:
            _retile(setup, replace(solution, patterns=()))
        except TilingInfeasibleError as layerwise_error:
            # Both too big: name the smaller need, the fused one (no home storage for its intermediates),
            # which is what the default compile gets once the level has that size.
            fused_need = error.needed_bytes if isinstance(error, TilingInfeasibleError) else None
            if fused_need is not None and (layerwise_error.needed_bytes is None
                                           or fused_need <= layerwise_error.needed_bytes):
                raise error from None
            raise


def _unfuse_staged_patterns(setup: TilerSetup) -> None:
    """Tile layer by layer the patterns that stage a tensor beyond home when that hop is double-buffered.

    A fused loop takes both hops of a staged tensor at once (single buffering
    of the outer hop); the user's double buffering of that hop wins over fusing
    those layers, as long as the home level can hold the second staging slots:
    otherwise the patterns stay fused, single buffered on that hop, and a
    warning says so.  Unfusing changes the home arena, and with it what moves
    beyond home, so this repeats until no pattern stages anything (patterns
    only disappear, so it ends).
    """
    compilation = setup.compilation
    while True:
        outer = compilation.results.get(OuterLevelPlacement)
        solution = compilation.results[TilingSolution]
        if outer is None or outer.buffering != "double" or not solution.patterns:
            return
        staged = {entry.layers for entry in solution.patterns if set(entry.layers) & set(outer.staging)}
        if not staged:
            return
        kept = tuple(entry for entry in solution.patterns if entry.layers not in staged)
        try:
            _retile(setup, replace(solution, patterns=kept))
        except TilingInfeasibleError as error:
            compilation.warnings.append(
                f"{outer.level} double buffering: {len(staged)} fused pattern(s) keep single buffering of the "
                f"{outer.level} hop, since tiling their layers alone does not fit ({error})")
            _retile(setup, solution)
            return


def _retile(setup: TilerSetup, solution: TilingSolution) -> None:
    """Start the tiling state afresh (keeping the time spent so far) and tile with ``solution``."""
    setup.compilation.results[TilingState] = TilingState(times=setup.state.times)
    setup.compilation.results[TilingSolution] = solution
    _place(setup, solution, None)


def _place(setup: TilerSetup, solution: TilingSolution, memory_map: MemoryMap | None) -> None:
    """Build the solution's tiles, place them in the compute level and check every level's capacity."""
    state = setup.state
    state.tiled_layers = schedule(setup, solution)
    if state.patterns or setup.tile_only:  # fused lifetimes, or back to the layer-wise plan after a fallback
        _replan_arena(setup)
    check_tiles(state.tiled_layers, state.patterns, setup.ctxt)  # each output element once, every box inside
    state.layouts = _memory_map(setup, state.tiled_layers, solution, memory_map)
    check_level_maps(state, setup.tile_alignment)
    for tiled in state.tiled_layers:  # which level the tiles live in (the buffers keep their home level)
        tiled.layer.representation.setdefault("tile_level", setup.compute_level)
    try:  # tensors the home level cannot hold move beyond it (L3), if the hierarchy and platform have one
        place_outer_level(setup.compilation, state, setup.hierarchy, setup.platform.placement)
    except OuterLevelTooSmall as error:
        raise TilingInfeasibleError(str(error), error.level, error.needed_bytes) from None
    for name, entry in level_usage(setup).items():
        if entry["capacity"] is not None and entry["used"] > entry["capacity"]:
            raise TilingInfeasibleError(f"{name} needs at least {entry['used']} bytes (arena {entry['arena']}, "
                                        f"tables {entry['tables']}, static {entry['static']}) but has {entry['capacity']}",
                                        name, int(entry["used"]))


def schedule(setup: TilerSetup, solution: TilingSolution) -> list[TiledLayer]:
    """Tiles and kernel variants of every layer, in layer order, with the fused patterns and the cores' shares."""
    tiled_layers = []
    candidates = setup.candidates()
    for number, layer in enumerate(candidates, 1):
        setup.progress.step(number, len(candidates), f"tiling: building tiles of {layer_label(layer)}")
        tiling = solution.layers.get(layer.c_name)
        if tiling is None:
            raise DeeployError(f"the tiling solution has no entry for layer {layer.c_name!r} ({layer.name!r})")
        tiled_layers.append(build_tiles(layer, setup.ctxt, setup.constraint_of(layer), tiling.tile))
    state = setup.state
    state.patterns, state.pattern_costs = [], {}
    if solution.patterns:  # one tile loop per fused chain: the pattern's tiles replace its layers'
        for pattern, cost in planner(setup, []).apply(solution.patterns, tiled_layers, candidates):
            state.patterns.append(pattern)
            state.pattern_costs[pattern.key] = cost
    state.splits.clear()
    if setup.parallelism is not None:
        for tiled in tiled_layers:
            state.splits[tiled.layer.c_name] = split_layer(tiled, setup.ctxt, setup.constraint_of(tiled.layer),
                                                           setup.parallelism.cores)
    return tiled_layers


def _memory_map(setup: TilerSetup, tiled_layers: list[TiledLayer], solution: TilingSolution,
                memory_map: MemoryMap | None) -> dict[str, LayerLayout]:
    """Place each unit's (layer's or fused pattern's) tables, tile buffers and scratch with the allocator."""
    compilation = setup.compilation
    placer = LevelPlacer(setup.state, setup.ctxt, setup.compute_level, setup.capacity, setup.tile_alignment,
                         setup.options.slots, setup.scratch_copies, setup.allocator, compilation.allocator_name,
                         allocator_origin(compilation.host, compilation.allocator_name), setup.progress)
    return placer.place(tiled_layers, set(solution.home_tables), home_inputs(setup, solution), memory_map)


def _replan_arena(setup: TilerSetup) -> None:
    """Plan the home arena again for the fused patterns' lifetimes (:mod:`deeploy_core.tiling.fusion.lifetimes`)."""
    compilation, ctxt = setup.compilation, setup.ctxt
    for name in setup.tile_only:  # back home, should a fallback have dropped their patterns
        ctxt[name].memory_level = setup.hierarchy.default_level
    compilation.memory_plan = plan_arena(
        compilation.layers, ctxt, compilation.allocator, compilation.allocator_name,
        setup.memory_plan.alignment, allocator_origin(compilation.host, compilation.allocator_name),
        fused_lifetimes(compilation.layers, ctxt, setup.state.patterns))
    setup.tile_only = intermediate_tensors(setup.state.patterns)
    for name in setup.tile_only:  # no home storage: its tiles live in the compute level only
        ctxt[name].offset, ctxt[name].memory_level = None, setup.compute_level


def level_usage(setup: TilerSetup) -> dict[str, dict[str, Any]]:
    """report.json's ``memory_levels``: per level its capacity and bytes used (arena, tables, static data)."""
    return memory_level_report(setup.state, setup.ctxt, setup.hierarchy, setup.memory_plan.arena_bytes,
                               setup.compilation.results.get(OuterLevelPlacement), setup.capacity,
                               setup.options.buffering)
