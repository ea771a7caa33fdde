"""Tensors the home level cannot hold live in the level beyond it (L3 beyond L2), staged through the home level.

A tiled compile keeps every tensor in its home level (L2) and moves tiles into
the compute level (L1).  When the home level's need — the activation arena,
the constants copied next to it and the tiling tables — exceeds its capacity
and the hierarchy has a level beyond it that the platform can address
(:attr:`~deeploy_core.platform.StaticPlacement.level_bases`), tensors move
there until the rest fits, by a deterministic policy:

1. constants first, largest first (ties by name): they are alive the whole
   run, so each one frees its bytes at every step; except the constants a
   kernel reads in place (:mod:`deeploy_core.tiling.home_inputs`), which stay;
2. then activations (graph inputs and outputs included), each time the largest
   one alive at the step where the home arena is fullest (ties by name;
   none there: the largest left);
3. finally every moved tensor, the last moved first, comes back when the home
   level still fits with it: everything that fits in L2 stays there.

Every tile of a tensor that lives beyond home passes through a *staging
buffer* in the home level, the size of its largest tile: a fetch moves the box
outer → staging, then staging → compute level; a store the reverse way.  A
streamed tensor gets one staging slot per the outer level's ``buffering``
(``double``: two, so the next tile's outer transfer is in flight while the
current tile computes), a tensor whose box never changes one.  The staging
buffers are blocks of the home arena alive during their layer, planned by the
selected allocator with the activations that stay home, so they are counted
against the home level's capacity like everything else.  The activations that
moved get an arena of their own in the outer level, planned by the same
allocator, and the moved constants are copied after it by ``InitNetwork``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.allocation.checked_solve import allocator_error, allocator_origin, solve_checked
from deeploy_core.compilation import Compilation
from deeploy_core.errors import DeeployError
from deeploy_core.extension_origin import ExtensionOrigin
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.midend.lifetimes import Lifetime
from deeploy_core.midend.memory_plan import MemoryPlan, align_up
from deeploy_core.platform import StaticPlacement
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.staging import LayerStaging, StagedBuffer
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tiles import TiledLayer, box_shape

STAGING_PREFIX = "staging:"
"""Block ids of the staging buffers in the home arena: ``staging:<layer>/in0``."""


@dataclass
class OuterLevelPlacement:
    """What lives in the level beyond home and where its tiles are staged (``compilation.results``)."""

    level: str
    """The level beyond home (``L3``)."""
    home: str
    buffering: str
    """``single`` or ``double``: staging slots per streamed tensor (the level's ``buffering``)."""
    capacity: int | None
    moved: list[str]
    """Storage buffers placed in the level, in the order the policy moved them."""
    arena: MemoryPlan
    """The moved activations' arena in the level."""
    constants: dict[str, int]
    """Byte offsets of the moved constants in the level (after the arena)."""
    static_bytes: int
    """Bytes of the moved constants (unaligned, as ``memory_levels[...].static`` counts them)."""
    used: int
    """The level's bytes from its base to the end of the last constant."""
    staging: dict[str, LayerStaging]
    """Per tiled layer (by C name) with a tensor beyond home, its staging buffers."""

    def usage(self) -> dict[str, Any]:
        """The level's entry in report.json's ``memory_levels`` (it holds no tables)."""
        return {"capacity": self.capacity, "arena": self.arena.arena_bytes, "tables": 0, "static": self.static_bytes,
                "used": self.used}

    def report(self) -> dict[str, Any]:
        """report.json's ``outer_level``: the level, the tensors moved there, its arena and the moved constants
        (each tiled layer's staging buffers are in its ``tiling.layers`` entry)."""
        return {
            "level": self.level,
            "home": self.home,
            "buffering": self.buffering,
            "tensors": list(self.moved),
            "arena": self.arena.to_json(),
            "constants": dict(sorted(self.constants.items())),
        }


@dataclass(frozen=True)
class _Use:
    """A tiled layer's input or output whose storage may move beyond home: the staging it would then need."""

    layer: str
    step: int
    end: int
    """The staging buffer is alive during steps ``[step, end)``: its layer's, or its fused pattern's."""
    index: int
    is_input: bool
    storage: str
    slot_bytes: int
    slots: int
    """Staging slots: the level's buffering for a streamed tensor of a layer tiled alone, else 1 (a box that never
    changes; a fused pattern, whose loop takes both hops at once)."""

    @property
    def block_id(self) -> str:
        return f"{STAGING_PREFIX}{self.layer}/{'in' if self.is_input else 'out'}{self.index}"


@dataclass
class _Need:
    """The home level with some tensors moved out: its arena problem, solution and bytes in all."""

    problem: AllocationProblem
    solution: AllocationSolution
    bytes: int


class OuterLevelPlanner:
    """Chooses the tensors that move beyond home and plans both levels (see the module's docstring).

    ``solve`` is the selected allocator (checked like the arena's), ``tables``
    the bytes of the tiling tables the home level holds, ``layouts`` says
    which inputs of each tiled layer have a box that never changes and which
    tensors a fused pattern keeps in the compute level (they move nothing and
    need no staging), ``slots`` the staging slots of a streamed tensor and
    ``fused`` the layers of fused patterns (one slot each), each with the
    steps its pattern's loop runs over, when their staging buffers are alive.
    ``lifetimes`` are the arena's (with fused patterns: stretched over them).
    """

    def __init__(self, lifetimes: dict[str, Lifetime], ctxt: NetworkContext, tiled_layers: list[TiledLayer],
                 layouts: dict[str, LayerLayout], home: str, capacity: int, slots: int, alignment: int,
                 constant_alignment: int, tables: int, solve: Callable[[AllocationProblem], AllocationSolution],
                 fused: dict[str, tuple[int, int]] | None = None) -> None:
        fused = fused or {}
        self.ctxt, self.home, self.capacity = ctxt, home, capacity
        self.alignment, self.constant_alignment, self.tables, self.solve = alignment, constant_alignment, tables, solve
        self.lifetimes = dict(lifetimes)
        self.sizes = {name: align_up(max(ctxt[name].size_bytes, 1), alignment) for name in self.lifetimes}
        pinned = {ctxt.storage_of(tiled.layer.node.inputs[index].name).name for tiled in tiled_layers
                  for index in layouts[tiled.layer.c_name].home_inputs}  # kernels read them in place, from home
        self.constants = sorted((b for b in ctxt.of_kind(BufferKind.CONSTANT) if b.memory_level == home),
                                key=lambda b: (-b.size_bytes, b.name))
        self.movable = [b for b in self.constants if b.name not in pinned]
        self.pinned_bytes = sum(b.size_bytes for b in self.constants if b.name in pinned)
        self.uses: list[_Use] = []
        for tiled in tiled_layers:
            node, key = tiled.layer.node, tiled.layer.c_name
            streamed, layout = 1 if key in fused else slots, layouts[key]
            step, end = fused.get(key, (tiled.layer.index, tiled.layer.index + 1))
            for index, tensor in enumerate(node.inputs):
                if (tensor.name and tiled.input_tile_bytes(index, ctxt) > 0
                        and index not in layout.local_inputs | layout.home_inputs):
                    self.uses.append(_Use(key, step, end, index, True, ctxt.storage_of(tensor.name).name,
                                          align_up(tiled.input_tile_bytes(index, ctxt), alignment),
                                          1 if index in layout.resident else streamed))
            for index, tensor in enumerate([t for t in node.outputs if t.name]):
                if index in layout.local_outputs:
                    continue
                self.uses.append(_Use(key, step, end, index, False, ctxt.storage_of(tensor.name).name,
                                      align_up(max(tiled.output_tile_bytes(index, ctxt), 1), alignment), streamed))

    # -- the home level's need -------------------------------------------------------------------------

    def staging_blocks(self, moved: set[str]) -> list[AllocationBlock]:
        return [AllocationBlock(use.block_id, use.step, use.end, use.slot_bytes * use.slots)
                for use in self.uses if use.storage in moved]

    def need(self, moved: set[str]) -> _Need:
        """The home level's bytes with ``moved`` beyond it: arena (with staging), aligned constants, tables."""
        blocks = [AllocationBlock(name, life.first, life.end, self.sizes[name])
                  for name, life in self.lifetimes.items() if name not in moved]
        problem = AllocationProblem(tuple(blocks + self.staging_blocks(moved)), None, self.alignment)
        solution = self.solve(problem)
        at = align_up(align_up(solution.peak(problem), self.alignment), self.constant_alignment)
        for constant in self.constants:
            if constant.name not in moved:
                at = align_up(at + constant.size_bytes, self.constant_alignment)
        return _Need(problem, solution, at + self.tables)

    # -- the policy ----------------------------------------------------------------------------------------

    def choose(self) -> tuple[list[str], _Need] | None:
        """The tensors to move (in the order moved) and the home level's plan, or None when nothing must move.

        Raises :class:`~deeploy_core.errors.DeeployError` naming the home level when even with every tensor
        moved its staging buffers and tables exceed it.
        """
        moved: list[str] = []
        need = self.need(set())
        if need.bytes <= self.capacity:
            return None
        for constant in self.movable:
            moved.append(constant.name)
            need = self.need(set(moved))
            if need.bytes <= self.capacity:
                break
        while need.bytes > self.capacity:
            candidate = self._next_activation(need, set(moved))
            if candidate is None:
                raise OuterLevelTooSmall(self.home, need.bytes, self.capacity, self.tables,
                                         max((block.size for block in self.staging_blocks(set(moved))), default=0),
                                         pinned=self.pinned_bytes)
            moved.append(candidate)
            need = self.need(set(moved))
        for name in reversed(list(moved)):
            kept = [other for other in moved if other != name]
            trial = self.need(set(kept))
            if trial.bytes <= self.capacity:
                moved, need = kept, trial
        return moved, need

    def _next_activation(self, need: _Need, moved: set[str]) -> str | None:
        """The largest activation alive at the home arena's fullest step (the largest left if none is there)."""
        left = [name for name in self.lifetimes if name not in moved and self.ctxt[name].memory_level == self.home]
        if not left:
            return None
        live: dict[int, int] = {}
        for block in need.problem.blocks:
            for step in range(block.lower, block.upper):
                live[step] = live.get(step, 0) + block.size
        fullest = min(live, key=lambda step: (-live[step], step))
        at_peak = [name for name in left if self.lifetimes[name].first <= fullest < self.lifetimes[name].end]
        return min(at_peak or left, key=lambda name: (-self.sizes[name], name))


class OuterLevelTooSmall(DeeployError):
    """Even with every tensor beyond home, the home level cannot hold the staging buffers and tables."""

    def __init__(self, home: str, needed: int, capacity: int, tables: int, largest: int, outer: str = "",
                 pinned: int = 0) -> None:
        beyond = outer or "the level beyond it"
        in_place = f", constants kernels read in place {pinned}" if pinned else ""
        every = "every other tensor" if pinned else "every tensor"
        super().__init__(f"{home} needs at least {needed} bytes (staging buffers, tables {tables}{in_place}; the "
                         f"largest staging block {largest}) but has {capacity}, even with {every} in {beyond}")
        self.level, self.needed_bytes, self.largest, self.pinned = home, needed, largest, pinned


def plan_outer_level(planner: OuterLevelPlanner, moved: list[str], need: _Need, level: str, capacity: int | None,
                     buffering: str, allocator_label: tuple[str, ExtensionOrigin | None]) -> OuterLevelPlacement:
    """Apply the choice: home arena (with staging) and outer arena planned, offsets and levels set on the buffers.

    Returns the placement; the caller replaces the compilation's memory plan with ``placement``'s home plan
    (:func:`home_memory_plan`).
    """
    ctxt, alignment = planner.ctxt, planner.alignment
    name, origin = allocator_label
    errors = find_allocation_errors(need.problem, need.solution)
    if errors:
        raise allocator_error(name, origin, ValueError(f"invalid {planner.home} arena layout: {errors[0]}"))
    moved_set = set(moved)
    activations = [n for n in planner.lifetimes if n in moved_set]
    outer_problem = AllocationProblem(tuple(AllocationBlock(n, planner.lifetimes[n].first, planner.lifetimes[n].end,
                                                            planner.sizes[n]) for n in activations), None, alignment)
    outer_solution = planner.solve(outer_problem)
    errors = find_allocation_errors(outer_problem, outer_solution)
    if errors:
        raise allocator_error(name, origin, ValueError(f"invalid {level} arena layout: {errors[0]}"))
    arena_bytes = align_up(outer_solution.peak(outer_problem), alignment)
    outer_arena = MemoryPlan(arena_bytes=arena_bytes, lower_bound=outer_problem.lower_bound(),
                             lifetimes={n: planner.lifetimes[n] for n in activations},
                             offsets=dict(outer_solution.offsets), allocator=name,
                             sizes={n: planner.sizes[n] for n in activations}, alignment=alignment)
    constants: dict[str, int] = {}
    at = align_up(arena_bytes, planner.constant_alignment)
    for constant in ctxt.of_kind(BufferKind.CONSTANT):
        if constant.name in moved_set:
            constants[constant.name] = at
            at = align_up(at + constant.size_bytes, planner.constant_alignment)
    used = max([arena_bytes] + [constants[c] + ctxt[c].size_bytes for c in constants])
    staging: dict[str, LayerStaging] = {}
    for use in planner.uses:
        if use.storage not in moved_set:
            continue
        entry = staging.setdefault(use.layer, LayerStaging())
        (entry.inputs if use.is_input else entry.outputs)[use.index] = StagedBuffer(
            need.solution.offsets[use.block_id], use.slot_bytes, use.slots)
    for tensor in ctxt:
        if ctxt.storage_of(tensor.name).name in moved_set:
            tensor.memory_level = level
    for activation in activations:
        ctxt[activation].offset = outer_solution.offsets[activation]
    for name, offset in constants.items():
        ctxt[name].offset = offset
    for block_id, offset in need.solution.offsets.items():
        if not block_id.startswith(STAGING_PREFIX):
            ctxt[block_id].offset = offset
    return OuterLevelPlacement(level, planner.home, buffering, capacity, list(moved), outer_arena, constants,
                               sum(ctxt[c].size_bytes for c in constants), used, staging)


def home_memory_plan(planner: OuterLevelPlanner, need: _Need, allocator: str) -> MemoryPlan:
    """The home arena after the move: the activations that stayed and the staging blocks (report, plot, C)."""
    return MemoryPlan(
        arena_bytes=align_up(need.solution.peak(need.problem), planner.alignment),
        lower_bound=need.problem.lower_bound(),
        lifetimes={block.id: Lifetime(block.lower, block.upper) for block in need.problem.blocks},
        offsets=dict(need.solution.offsets),
        allocator=allocator,
        sizes={block.id: block.size for block in need.problem.blocks},
        alignment=planner.alignment,
    )


def place_outer_level(compilation: Compilation, state: TilingState, hierarchy: MemoryHierarchy,
                      placement: StaticPlacement) -> OuterLevelPlacement | None:
    """Move what the home level cannot hold beyond it, if the hierarchy and the platform have a level for it.

    Nothing changes (None) when the home level's need fits it, when it is
    unbounded, or when no level beyond it is one the platform addresses
    (``placement.level_bases``) and copies constants into: the caller's
    capacity check then reports the home level as too small.  Otherwise the
    placement goes into ``compilation.results`` and the compilation's memory
    plan becomes the home arena with its staging buffers.
    """
    previous = compilation.results.get(OuterLevelPlacement)
    if previous is not None:  # tiled again (a fused solution given up): every tensor starts at home again
        del compilation.results[OuterLevelPlacement]
        for tensor in compilation.ctxt:
            if compilation.ctxt.storage_of(tensor.name).name in previous.moved:
                tensor.memory_level = previous.home
    home, plan = hierarchy.default_level, compilation.memory_plan
    capacity = hierarchy.level(home).size
    bases = dict(placement.level_bases)
    outer = next((level for level in hierarchy.outer_levels() if level in bases), None)
    if capacity is None or outer is None or plan is None or not placement.constants_in_arena_level:
        return None
    name = compilation.allocator_name
    origin = allocator_origin(compilation.host, name)

    def solve(problem: AllocationProblem) -> AllocationSolution:
        solution = solve_checked(compilation.allocator, problem, name, origin)
        if not solution.feasible:
            raise allocator_error(name, origin, ValueError(f"found no arena layout: {solution.reason}"))
        return solution

    tiled_layers, layouts = state.tiled_layers, state.layouts
    level = hierarchy.level(outer)
    planner = OuterLevelPlanner(plan.lifetimes, compilation.ctxt, tiled_layers, layouts, home, capacity,
                                2 if level.buffering == "double" else 1, plan.alignment, placement.constant_alignment,
                                sum(layout.table_bytes for layout in layouts.values()), solve,
                                {name: (pattern.layers[0].index, pattern.layers[-1].index + 1)
                                 for pattern in state.patterns for name in pattern.names})
    try:
        choice = planner.choose()
    except OuterLevelTooSmall as error:
        raise OuterLevelTooSmall(home, error.needed_bytes, capacity, planner.tables, error.largest, outer,
                                 error.pinned) from None
    if choice is None:
        return None
    moved, need = choice
    result = plan_outer_level(planner, moved, need, outer, level.size, level.buffering, (name, origin))
    compilation.memory_plan = home_memory_plan(planner, need, name)
    compilation.results[OuterLevelPlacement] = result
    return result


def staged_bytes(tiled: TiledLayer, ctxt: NetworkContext, staging: LayerStaging, resident: set[int]) -> tuple[int, int]:
    """(bytes moved outer -> home, home -> outer) for one inference of a tiled layer: its staged tensors' boxes."""
    node = tiled.layer.node
    fetched = stored = 0
    for index in staging.inputs:
        size = ctxt[node.inputs[index].name].dtype.size
        boxes = [tile.inputs[index] for tile in tiled.tiles][:1 if index in resident else None]
        fetched += sum(math.prod(box_shape(box)) * size for box in boxes if box is not None)
    outputs = [t for t in node.outputs if t.name]
    for index in staging.outputs:
        size = ctxt[outputs[index].name].dtype.size
        stored += sum(math.prod(box_shape(tile.outputs[index])) * size for tile in tiled.tiles)
    return fetched, stored


def report_outer_level(report: dict[str, Any], placement: OuterLevelPlacement | None, tiled_layers: list[TiledLayer],
                       layouts: dict[str, LayerLayout], ctxt: NetworkContext) -> None:
    """Add what lives beyond home to report.json: ``outer_level``, each staged layer's ``staging`` (its buffers and
    bytes over the outer link) and those bytes in ``traffic`` (``L3->L2``, ``L2->L3``)."""
    if placement is None:
        return
    by_key = {tiled.layer.c_name: tiled for tiled in tiled_layers}
    fetch, store = f"{placement.level}->{placement.home}", f"{placement.home}->{placement.level}"
    traffic = report["traffic"]
    for entry in report["tiling"]["layers"]:
        staging = placement.staging.get(entry["key"])
        if not staging:
            continue
        fetched, stored = staged_bytes(by_key[entry["key"]], ctxt, staging, layouts[entry["key"]].resident)
        entry["staging"] = {"bytes_in": fetched, "bytes_out": stored,
                            "buffers": {**{f"in{i}": b.to_json() for i, b in sorted(staging.inputs.items())},
                                        **{f"out{i}": b.to_json() for i, b in sorted(staging.outputs.items())}}}
        traffic[fetch] = traffic.get(fetch, 0) + fetched
        traffic[store] = traffic.get(store, 0) + stored
    report["traffic"] = dict(sorted(traffic.items()))
    report["outer_level"] = placement.report()
