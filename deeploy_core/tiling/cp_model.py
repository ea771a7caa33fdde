"""One CP-SAT model for the tiling of a whole network.

Per layer and tiled output axis there is a tile-size variable ``t`` and a
tile-count variable ``n = ceil(D / t)``.  Every tensor's tile has, per axis, an
extent that is constant or ``min(full, scale · t + offset)``; its bytes are the
product of the extents.  Per layer, the compute level must hold

    Σ tensors  buffers(tensor) · bytes(tensor)   (×2 per tensor when double buffered)
    + alignment slack per buffer
    + the tiling table: columns · 4 bytes · n_tiles   (copied into the level; see below)
    + what the verification found the model had missed (scratch buffers)
    ≤ budget(layer).

A layer whose tiles fit only without its table in the compute level keeps the
table where its constant array lives (the home level, L2 on a cluster) and
reads one row per tile from there: a few words per tile against the tile's
transfers and kernel, and what lets a 16-element ReLU or a 27-element
convolution window tile into a few hundred bytes of L1, where the table of
their one-element tiles would be several times the tiles themselves.

A layer that still does not fit, because a constant every tile needs whole is
larger than the compute level (an LSTM's gate weights: 4 × hidden² floats,
256 KiB at hidden 128), reads those constants in place from the home level as
well, the fewest of them, largest first, that make it fit.  That is slower
per access than a copy in the compute level, so it is the last resort, tried
only once the smaller models are proven infeasible; it turns "does not fit"
into "runs, reading its weights from L2".

The objective covers every layer: ``max`` wants the fewest tiles (largest
tiles) over all layers, ``min`` the smallest tiles, ``random-max`` fewest tiles
with seeded random layer weights (the names are listed, with their meanings, in
:data:`deeploy_core.tiling.tiler_options.STRATEGIES`).  One worker, a fixed
seed and a deterministic time limit make the answer reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from deeploy_core.solvers.cp_sat import cp_model_module

if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = cp_model_module()  # without pandas: see deeploy_core.solvers.cp_sat

from deeploy_core.allocation.model_contribution import ModelBlock, ModelPlacement, TilingModelAllocator
from deeploy_core.tiling.geometry import Extent

TABLE_BLOCK = "table"
EXTRA_BLOCK = "(extra)"
"""Model blocks for the tiling table and for the constant bytes (scratch probes, alignment slack)."""


@dataclass(frozen=True)
class TensorTerm:
    """One tensor of a layer in the memory constraint."""

    name: str
    extents: tuple[Extent, ...]
    element_bytes: int
    buffers: int
    block: str = ""
    """The id of the tensor's block in the layer's memory map (``in0``, ``out0``, …); defaults to ``name``."""
    readable_in_place: bool = False
    """A constant input every tile reads whole: the layer may read it where it is stored instead of a copy in the
    compute level (see :func:`inputs_at_home`)."""


@dataclass
class LayerModel:
    """What the CP model needs to know about one layer."""

    name: str
    out_shape: tuple[int, ...]
    tiled_axes: tuple[int, ...]
    tensors: list[TensorTerm]
    table_columns: int
    alignment: int
    budget: int
    extra_bytes: int = 0
    table_in_level: bool = True
    """Whether the tiling table is copied into the compute level (False: read in place from the home level)."""
    table_budget: int | None = None
    """Bytes one table may take where it is stored (the home level's size): the smaller the compute level, the more
    tiles, and a table left at home must not outgrow home instead (None: unbounded).  Several layers' tables
    together may still overflow home; the home level's check after tiling says so, naming the tables' bytes."""

    @property
    def free_axes(self) -> tuple[int, ...]:
        return tuple(axis for axis in self.tiled_axes if self.out_shape[axis] > 1)


@dataclass
class _LayerVars:
    tiles: dict[int, cp_model.IntVar] = field(default_factory=dict)
    choices: list[cp_model.IntVar] = field(default_factory=list)
    count: cp_model.IntVar | int = 1
    memory: cp_model.LinearExpr | int = 0
    blocks: list[ModelBlock] = field(default_factory=list)


def _product(model: cp_model.CpModel, factors: list[cp_model.IntVar | int], bound: int, label: str) -> cp_model.IntVar | int:
    """A variable equal to the product of ``factors`` (constants folded first)."""
    constant = math.prod(f for f in factors if isinstance(f, int))
    variables = [f for f in factors if not isinstance(f, int)]
    if not variables:
        return constant
    current: cp_model.IntVar = variables[0]
    for index, factor in enumerate(variables[1:]):
        nxt = model.new_int_var(1, max(1, bound), f"{label}_p{index}")
        model.add_multiplication_equality(nxt, [current, factor])
        current = nxt
    if constant == 1:
        return current
    scaled = model.new_int_var(constant, max(constant, bound * constant), f"{label}_c")
    model.add(scaled == constant * current)
    return scaled


def alignment_slack(element_bytes: int, alignment: int) -> int:
    """The most bytes aligning a buffer of ``element_bytes``-sized elements up to ``alignment`` can add: its size is
    a multiple of gcd(element bytes, alignment), so at most the rest of one alignment unit."""
    return alignment - math.gcd(element_bytes, alignment)


def tile_options(dim: int) -> list[tuple[int, int]]:
    """The (tile count, tile size) pairs worth considering for an axis of ``dim``: the smallest size per count.

    Any other size gives the same number of tiles with bigger buffers, so the
    model chooses among these few pairs instead of every size from 1 to ``dim``.
    """
    pairs: dict[int, int] = {}
    for count in range(1, dim + 1):
        size = -(-dim // count)
        actual = -(-dim // size)
        pairs.setdefault(actual, size)
    return sorted(pairs.items())


def _add_layer(model: cp_model.CpModel, layer: LayerModel, index: int) -> _LayerVars:
    variables = _LayerVars()
    counts: list[cp_model.IntVar | int] = []
    choices: dict[int, tuple[cp_model.IntVar, list[int]]] = {}
    for axis in layer.free_axes:
        options = tile_options(layer.out_shape[axis])
        choice = model.new_int_var(0, len(options) - 1, f"L{index}_i{axis}")
        count = model.new_int_var(1, options[-1][0], f"L{index}_n{axis}")
        tile = model.new_int_var(1, options[0][1], f"L{index}_t{axis}")
        model.add_element(choice, [n for n, _ in options], count)
        model.add_element(choice, [t for _, t in options], tile)
        variables.tiles[axis] = tile
        variables.choices.append(choice)
        choices[axis] = (choice, [t for _, t in options])
        counts.append(count)
    max_tiles = math.prod(tile_options(layer.out_shape[a])[-1][0] for a in layer.free_axes)
    variables.count = _product(model, counts, max_tiles, f"L{index}_count")
    terms: list[cp_model.LinearExpr | int] = []
    for tensor_index, tensor in enumerate(layer.tensors):
        extents: list[cp_model.IntVar | int] = []
        for extent_index, extent in enumerate(tensor.extents):
            if extent.axis is None or extent.axis not in choices:
                whole = layer.out_shape[extent.axis] if extent.axis is not None else 0
                extents.append(extent.size_of(whole))
                continue
            choice, sizes = choices[extent.axis]
            extent_sizes = [max(1, extent.size_of(size)) for size in sizes]
            value = model.new_int_var(min(extent_sizes), max(extent_sizes), f"L{index}_x{tensor_index}_{extent_index}")
            model.add_element(choice, extent_sizes, value)
            extents.append(value)
        bound = math.prod(e.full for e in tensor.extents) if tensor.extents else 1
        elements = _product(model, extents, bound, f"L{index}_x{tensor_index}")
        slack = alignment_slack(tensor.element_bytes, layer.alignment)
        term = tensor.buffers * tensor.element_bytes * elements + tensor.buffers * slack
        terms.append(term)
        largest = tensor.buffers * (tensor.element_bytes * bound + slack)
        variables.blocks.append(ModelBlock(tensor.block or tensor.name, index, index + 1, term, largest))
    if layer.table_budget is not None:
        model.add(4 * layer.table_columns * variables.count <= layer.table_budget)
    table = 4 * layer.table_columns * variables.count if layer.table_in_level else 0
    extra = layer.extra_bytes + _table_slack(layer)
    variables.memory = sum(terms) + table + extra
    if layer.table_in_level:
        variables.blocks.append(ModelBlock(TABLE_BLOCK, index, index + 1, table, 4 * layer.table_columns * max_tiles))
    variables.blocks.append(ModelBlock(EXTRA_BLOCK, index, index + 1, extra, extra))
    return variables


def _table_slack(layer: LayerModel) -> int:
    """Bytes aligning the table's block up may add (its size is a multiple of its 4-byte entries)."""
    return alignment_slack(4, layer.alignment) if layer.table_in_level else 0


def whole_layer_memory(layer: LayerModel) -> int:
    """The memory constraint's left-hand side for one tile holding the whole output (every count 1).

    The same sum :func:`_add_layer` builds, evaluated at the largest tile:
    when it is within the budget, one tile is the fewest there can be, so the
    solver has nothing to choose.
    """
    memory = (4 * layer.table_columns if layer.table_in_level else 0) + layer.extra_bytes + _table_slack(layer)
    for tensor in layer.tensors:
        elements = math.prod(max(1, extent.size_of(layer.out_shape[extent.axis])) if extent.axis is not None
                             else extent.full for extent in tensor.extents)
        slack = alignment_slack(tensor.element_bytes, layer.alignment)
        memory += tensor.buffers * (tensor.element_bytes * elements + slack)
    return memory


@dataclass
class CpResult:
    """Tile sizes per layer (None when infeasible) and solver figures."""

    tiles: dict[str, dict[int, int]] | None
    status: str
    seconds: float
    objective: float | None = None
    orders: dict[str, list[str]] = field(default_factory=dict)
    """Per layer, the block order a co-optimising allocator chose (lowest address first)."""
    home_tables: tuple[str, ...] = ()
    """Layers whose tiles fit only with their table left in the home level (see the module docstring)."""
    home_inputs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per layer whose tiles fit only with some whole constant inputs read in place too (a subset of
    ``home_tables``), those inputs' tensor names."""


def table_at_home(layer: LayerModel) -> LayerModel:
    """``layer`` with its tiling table read in place from the home level instead of copied into the compute level."""
    return replace(layer, table_in_level=False)


def in_place_candidates(layer: LayerModel) -> list[str]:
    """The tensors ``layer`` may read in place, largest first (ties by name): the order they leave the level."""
    terms = [t for t in layer.tensors if t.readable_in_place]
    return [t.name for t in sorted(terms, key=lambda t: (-t.element_bytes * math.prod(e.full for e in t.extents),
                                                          t.name))]


def inputs_at_home(layer: LayerModel, names: Collection[str] | None = None) -> LayerModel:
    """``layer`` with its table and the constant inputs ``names`` (default: every one it may) read in place from
    the home level."""
    chosen = set(in_place_candidates(layer) if names is None else names)
    return replace(layer, table_in_level=False, tensors=[t for t in layer.tensors if t.name not in chosen])


def most_relaxed(layer: LayerModel) -> LayerModel:
    """The smallest model the solver may fall back to for ``layer``: what a diagnosis bounds the need with."""
    return inputs_at_home(layer)


def solve_tiling(layers: list[LayerModel], strategy: str = "max", seed: int = 0, time_limit: float = 10.0,
                 allocator: TilingModelAllocator | None = None) -> CpResult:
    """Solve the network's tiling; every layer's memory within its budget.

    The objective is a sum over layers and no constraint joins two layers
    (each has its own budget, and a co-optimising ``allocator`` places one
    layer's blocks at a time), so each layer is solved as its own small
    model: every one is proven optimal in a fraction of the time one model of
    the whole network took, where the search could run into ``time_limit``
    (now a per-layer limit) on networks of a few dozen layers.  With a
    co-optimising ``allocator`` the memory constraint of each layer is the
    allocator's own placement model instead of the plain sum of sizes.
    """
    rng = random.Random(seed)
    weights = [rng.randint(1, 8) if strategy == "random-max" else 1 for _ in layers]
    tiles: dict[str, dict[int, int]] = {}
    orders: dict[str, list[str]] = {}
    seconds, objective, proven = 0.0, 0.0, True
    home_tables: list[str] = []
    home_inputs: dict[str, tuple[str, ...]] = {}
    for index, (layer, weight) in enumerate(zip(layers, weights)):
        if allocator is None and strategy != "min" and whole_layer_memory(layer) <= layer.budget:
            # One tile fits: it is the fewest tiles, the unique optimum of the model below, found without a solve.
            tiles[layer.name] = {axis: layer.out_shape[axis] for axis in sorted(layer.free_axes)}
            objective += weight
            continue
        status, solver, variables, placement = _solve_layer(layer, index, weight, strategy, seed, time_limit,
                                                            allocator)
        seconds += solver.wall_time
        if status == cp_model.INFEASIBLE and layer.table_in_level and layer.table_columns:
            status, solver, variables, placement = _solve_layer(table_at_home(layer), index, weight, strategy, seed,
                                                                time_limit, allocator)
            seconds += solver.wall_time
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                home_tables.append(layer.name)
        candidates = in_place_candidates(layer)
        for count in range(1, len(candidates) + 1):  # the fewest, largest constants that make the layer fit
            if status != cp_model.INFEASIBLE:
                break
            status, solver, variables, placement = _solve_layer(inputs_at_home(layer, candidates[:count]), index,
                                                                weight, strategy, seed, time_limit, allocator)
            seconds += solver.wall_time
            if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                home_tables.append(layer.name)
                home_inputs[layer.name] = tuple(candidates[:count])
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            # INFEASIBLE is a proof; UNKNOWN means the limit came first, which callers must not report as infeasible.
            return CpResult(None, solver.status_name(status), seconds)
        proven = proven and status == cp_model.OPTIMAL
        objective += solver.objective_value
        tiles[layer.name] = {axis: int(solver.value(var)) for axis, var in sorted(variables.tiles.items())}
        if placement is not None:
            orders[layer.name] = placement.order(solver)
    return CpResult(tiles, "OPTIMAL" if proven else "FEASIBLE", seconds, objective, orders, tuple(home_tables),
                    home_inputs)


def _solve_layer(layer: LayerModel, index: int, weight: int, strategy: str, seed: int, time_limit: float,
                 allocator: TilingModelAllocator | None
                 ) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver, _LayerVars, ModelPlacement | None]:
    """One layer's model solved: fewest tiles (most for ``min``) within its budget."""
    model = cp_model.CpModel()
    variables = _add_layer(model, layer, index)
    placement = None
    if allocator is not None:
        placement = allocator.add_to_tiling_model(model, variables.blocks, layer.budget, f"L{index}")
    else:
        model.add(variables.memory <= layer.budget)
    if variables.choices:  # options are sorted by tile count: try the fewest tiles first (or the most, for "min")
        model.add_decision_strategy(variables.choices, cp_model.CHOOSE_FIRST,
                                    cp_model.SELECT_MAX_VALUE if strategy == "min" else cp_model.SELECT_MIN_VALUE)
    if strategy == "min":
        model.maximize(variables.count)
    else:
        model.minimize(weight * variables.count)
    status, solver = _solve(model, seed, time_limit)
    return status, solver, variables, placement


@dataclass(frozen=True)
class MemoryNeed:
    """The least memory a layer can be tiled into, as far as the solver proved it.

    ``at_least`` is always a proven lower bound; ``proven`` says whether it is
    also reached by a tiling (the solve finished), so a diagnosis never states
    more than the solver showed.
    """

    at_least: int
    proven: bool


def minimum_memory(layer: LayerModel, time_limit: float = 5.0) -> MemoryNeed:
    """The least memory the layer can be tiled into (its budget ignored), for infeasibility diagnosis."""
    model = cp_model.CpModel()
    variables = _add_layer(model, layer, 0)
    bound = model.new_int_var(0, 2**40, "memory")
    model.add(bound == variables.memory)
    model.minimize(bound)
    status, solver = _solve(model, 0, time_limit)
    if status == cp_model.OPTIMAL:
        return MemoryNeed(int(solver.value(bound)), True)
    return MemoryNeed(max(0, math.ceil(solver.best_objective_bound)), False)


def _solve(model: cp_model.CpModel, seed: int, time_limit: float) -> tuple[cp_model.CpSolverStatus, cp_model.CpSolver]:
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = seed
    solver.parameters.max_deterministic_time = time_limit
    # CP-SAT would otherwise take SIGINT over during a solve, end the search as if its limit had been reached and
    # return a status the caller might take for infeasibility; the command line handles interrupts itself.
    solver.parameters.catch_sigint_signal = False
    return solver.solve(model), solver
