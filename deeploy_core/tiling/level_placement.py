"""Placing every tiling unit's blocks in the compute level, and checking the map independently of who placed them.

A unit is a layer or a fused pattern; its blocks are its tile buffers (one
slot per buffering stage), tables and kernel scratch
(:mod:`deeploy_core.tiling.unit_layout`).  Offsets come from a memory map to
reuse (``--tiling-from``), from the order a co-optimising allocator chose
inside the CP model, or from the compile's allocator; the map is then checked
against the level's capacity and alignment with the allocator left out.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from deeploy_core.allocation import (AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors,
                                     stack_in_order)
from deeploy_core.allocation.checked_solve import allocator_error, solve_checked
from deeploy_core.errors import DeeployError
from deeploy_core.extension_origin import ExtensionOrigin
from deeploy_core.ir import NetworkContext
from deeploy_core.midend.memory_plan import align_up
from deeploy_core.progress import Progress
from deeploy_core.tiling.cp_model import EXTRA_BLOCK
from deeploy_core.tiling.diagnosis import layer_label
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.memory_map import LevelMap, MapBlock
from deeploy_core.tiling.scratch_term import SCRATCH_BLOCK
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiles import TiledLayer
from deeploy_core.tiling.unit_layout import UnitBlocks, tiling_units, unit_blocks, unit_layouts


def expand_model_order(order: list[str], block_ids: list[str]) -> list[str]:
    """A co-optimising allocator's order over model blocks, as memory-map block ids.

    The model has one scratch block (and one for constant bytes) where the map
    has one block per scratch buffer: those stand in for every ``scratch:*``
    block, at the position the allocator gave them.
    """
    scratch = [b for b in block_ids if b.startswith("scratch:")]
    expanded: list[str] = []
    for block in order:
        if block in (SCRATCH_BLOCK, EXTRA_BLOCK):
            expanded += [b for b in scratch if b not in expanded]
        elif block in block_ids:
            expanded.append(block)
    return expanded


@dataclass
class LevelPlacer:
    """Places the tiling units of one compile in its compute level (``level``, ``capacity`` bytes)."""

    state: TilingState
    ctxt: NetworkContext
    level: str
    capacity: int
    alignment: int
    slots: int
    scratch_copies: int
    allocator: object
    allocator_name: str
    origin: ExtensionOrigin | None
    progress: Progress

    def place(self, tiled_layers: list[TiledLayer], home_tables: set[str], home_inputs: Mapping[str, set[int]],
              memory_map: dict[str, Any] | None = None) -> dict[str, LayerLayout]:
        """Every unit's layouts by layer; the level's map and peak go into the state."""
        started = time.perf_counter()
        state, alignment = self.state, self.alignment
        layouts: dict[str, LayerLayout] = {}
        level_blocks: list[MapBlock] = []
        units = tiling_units(tiled_layers, state.patterns)
        for number, (members, pattern) in enumerate(units, 1):
            first, last = members[0].layer, members[-1].layer
            self.progress.step(number, len(units), f"tiling: placing {layer_label(last)}")
            unit = unit_blocks(members, pattern, self.ctxt, alignment, self.slots, state.splits, self.scratch_copies,
                               home_tables if pattern is None else set(), dict(home_inputs) if pattern is None else {})
            offsets = self._offsets(members, unit, memory_map)
            for tiled, layout in zip(members, unit_layouts(members, unit, offsets, self.ctxt, alignment, self.slots)):
                layouts[tiled.layer.c_name] = layout
            for position, tiled in enumerate(members):
                for name, block in unit.ids[position].items():
                    if block in unit.sizes and not (name.startswith("in") and int(name[2:]) in unit.locals_in[position]):
                        level_blocks.append(MapBlock(f"{tiled.layer.c_name}/{name}", offsets[block], unit.sizes[block],
                                                     first.index, last.index + 1))
        state.level_maps = {self.level: LevelMap(self.level, self.capacity, level_blocks)}
        state.level_peak = align_up(max((layout.peak for layout in layouts.values()), default=0), alignment)
        state.times.allocation += time.perf_counter() - started
        return layouts

    def _offsets(self, members: list[TiledLayer], unit: UnitBlocks, memory_map: dict[str, Any] | None
                 ) -> dict[str, int]:
        """The unit's block offsets: reused from ``memory_map``, in a co-optimising allocator's order, or placed."""
        label = " + ".join(repr(tiled.layer.name) for tiled in members)
        blocks = tuple(AllocationBlock(name, 0, 1, size) for name, size in unit.sizes.items())
        if memory_map is not None:
            offsets: dict[str, int] = {}
            for position, tiled in enumerate(members):
                given = {name: int(offset) for name, offset in memory_map.get(tiled.layer.c_name, {}).items()}
                own = {name: block for name, block in unit.ids[position].items()
                       if not (name.startswith("in") and int(name[2:]) in unit.locals_in[position])}
                if set(given) != set(own):
                    raise DeeployError(f"the memory map does not match layer {tiled.layer.name!r}'s buffers")
                offsets.update({own[name]: offset for name, offset in given.items()})
            return offsets
        key = members[0].layer.c_name
        if len(members) == 1 and key in self.state.placement_orders:
            order = expand_model_order(self.state.placement_orders[key], sorted(unit.sizes))
            return stack_in_order(order, dict(unit.sizes), {b.id: (0, 1) for b in blocks}, self.alignment)
        problem = AllocationProblem(blocks, self.capacity, self.alignment)
        solution = solve_checked(self.allocator, problem, self.allocator_name, self.origin)
        if not solution.feasible:
            raise TilingInfeasibleError(
                f"{self.level}: allocator {self.allocator_name!r} cannot place layer {label}'s tiles: {solution.reason}")
        errors = find_allocation_errors(problem, solution)
        if errors:
            raise allocator_error(self.allocator_name, self.origin, ValueError(
                f"invalid {self.level} layout for layer {label}: {errors[0]}"))
        return dict(solution.offsets)


def check_level_maps(state: TilingState, alignment: int) -> None:
    """Each layer's blocks are disjoint, aligned and within the compute level."""
    for level_map in state.level_maps.values():
        by_time: dict[int, list[MapBlock]] = {}
        for block in level_map.blocks:
            by_time.setdefault(block.start, []).append(block)
        for blocks in by_time.values():
            problem = AllocationProblem(tuple(AllocationBlock(b.name, 0, 1, b.size) for b in blocks),
                                        level_map.capacity, alignment)
            errors = find_allocation_errors(problem, AllocationSolution({b.name: b.offset for b in blocks}))
            if errors:
                raise DeeployError(f"{level_map.level} memory map is invalid: {errors[0]}")
