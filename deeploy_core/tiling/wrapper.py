"""The tiler deployer wrapper: tiles every layer into the compute level after ``bind``.

It wraps a memory-aware deployer (one whose memory level put a
:class:`~deeploy_core.memory.MemoryHierarchy` into ``compilation.results``).
What it computes goes into the compilation too: ``results[TilingSolution]``,
``results[TilingState]`` (tiles, layouts, core splits, the compute level's
map) and, for ``generate``, a code transformation per tiled layer
(:class:`~deeploy_core.tiling.tiled_code.TiledLayerCode`) plus the level's
declaration in the network's code additions.  ``bind()``
tiles automatically; ``tile(tilingSolution, memoryMap)`` takes a solution and
memory map exported from an earlier compile instead (both or neither) and
reproduces its code exactly.  Every compile runs the correctness checks on
whatever solution it uses: tiles cover each output exactly once and stay inside
every tensor, and each level's memory map is verified independently of the
allocator that made it, against the level's capacity.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from deeploy_core.allocation import TilingModelAllocator
from deeploy_core.allocation.checked_solve import allocator_origin
from deeploy_core.codegen.arena_views import union_members
from deeploy_core.deployer.base import Deployer
from deeploy_core.deployer.wrapper import DeployerWrapper
from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.lowering.split_reductions import SplitReductions
from deeploy_core.mapping import Layer
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.midend.memory_plan import MemoryPlan, plan_arena
from deeploy_core.platform import Platform
from deeploy_core.tiling.alignment import tile_alignment
from deeploy_core.tiling.codegen import LayerLayout
from deeploy_core.tiling.constraints import tile_constraint_of
from deeploy_core.tiling.cp_model import LayerModel, solve_tiling
from deeploy_core.tiling.diagnosis import diagnose, layer_label, minimum_level_size
from deeploy_core.tiling.errors import TilingInfeasibleError, TilingSolveStoppedError
from deeploy_core.tiling.fusion.lifetimes import fused_lifetimes, intermediate_tensors
from deeploy_core.tiling.fusion.planner import FusionPlanner
from deeploy_core.tiling.geometry import TileConstraint
from deeploy_core.tiling.layer_models import ModelBudget, layer_model, readable_inputs, whole_axes
from deeploy_core.tiling.level_placement import LevelPlacer, check_level_maps
from deeploy_core.tiling.outer_level import OuterLevelPlacement, OuterLevelTooSmall, place_outer_level, report_outer_level
from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit, split_layer
from deeploy_core.tiling.solution import LayerTiling, PatternTiling, TilingSolution
from deeploy_core.tiling.state import TilingState, TilingTimes
from deeploy_core.tiling.tiled_code import TiledLayerCode
from deeploy_core.tiling.tiles import TiledLayer, build_tiles
from deeploy_core.tiling.tiling_report import TilerSettings, memory_level_report, tiling_report
from deeploy_core.tiling.traffic import level_peaks, network_traffic
from deeploy_core.tiling.verification import check_tiles

BUFFERING_SLOTS = {"single": 1, "double": 2}
FUSION_MODES = ("none", "auto")
"""``none``: every layer tiled alone; ``auto``: chains fused where the tiler's cost says it pays."""


__all__ = ["TilerDeployerWrapper", "TilingInfeasibleError", "TilingSolveStoppedError", "TilingState", "TilingTimes"]


class TilerDeployerWrapper(DeployerWrapper):
    """Tiling for any memory-aware deployer; what it computes goes into the shared compilation's results.

    Its own attributes are its configuration: the buffering scheme, strategy
    (the built-in tilers' ``strategy`` option), seed, time limit, name and
    allocator, plus the solution and memory map to reuse, read from the
    compile's settings in :meth:`_read_options`.
    """

    def __init__(self, inner: Deployer | DeployerWrapper, allocator: object, buffering: str = "single",
                 strategy: str = "max", seed: int = 0, time_limit: float = 10.0, name: str = "tiler",
                 fusion: str = "auto") -> None:
        super().__init__(inner)
        if MemoryHierarchy not in self.compilation.results:
            raise DeeployError("the tiler needs a memory-aware deployer: choose a memory level (--memory-level)")
        if buffering not in BUFFERING_SLOTS:
            raise DeeployError(f"unknown buffering {buffering!r} (single or double)")
        # The tiler's own scheme, never a deployer option: one source of truth (--buffering only selects a tiler).
        self.buffering = buffering
        if fusion not in FUSION_MODES:
            raise DeeployError(f"unknown fusion {fusion!r} ({' or '.join(FUSION_MODES)})")
        self.fusion = fusion
        self._tile_alignment: int | None = None
        self._tile_only: set[str] = set()
        """Fused intermediate tensors, which the home arena does not hold (tile() re-plans it for the patterns)."""
        self.seed, self.time_limit, self.tiler_name = seed, time_limit, name
        self.allocator = allocator
        self.compilation.scratch_in_compute_level = True  # known before parsing: kernels pick tile-sized scratch
        self._read_options(strategy)

    def _read_options(self, strategy: str) -> None:
        """The one place the tiler reads what it is told: its ``strategy`` option (from its factory) and the
        core's tiling to reuse (``--tiling-from``)."""
        settings = self.compilation.settings
        self.strategy = strategy
        self.reused_solution: TilingSolution | None = settings.tiling_solution
        self.reused_memory_map: dict[str, dict[str, int]] | None = settings.memory_map

    # -- stages ----------------------------------------------------------------------------------------

    def lower(self) -> None:
        self.inner.lower()
        SplitReductions().apply_pass(self.compilation.graph, {})

    def bind(self) -> None:
        self.inner.bind()
        self.tile(self.reused_solution, self.reused_memory_map)

    def generate(self) -> Any:
        compilation, state, transfers = self.compilation, self.state, self.platform.transfers
        outer = compilation.results.get(OuterLevelPlacement)
        code = TiledLayerCode(state, transfers, self._level_pointer(), self.parallelism, outer)
        for tiled in state.tiled_layers:
            compilation.chain_contributions.setdefault(tiled.layer.index, []).append(code)
        level = self.compute_level
        compilation.code.headers.extend(transfers.headers)
        compilation.code.definitions.extend([
            f"/* The {level} scratch memory: every tiled layer's tiles, tables and scratch ({state.level_peak} bytes). */",
            transfers.level_declaration.format(bytes=max(state.level_peak, 8), name=self._level_symbol(),
                                                members=union_members(state.level_peak)),
        ])
        generated = self.inner.generate()
        report = generated.report
        report["memory_levels"] = self.memory_level_report()
        report["tiling"] = self.tiling_report()
        report["traffic"] = network_traffic(self.memory_hierarchy, [(layer["bytes_in"], layer["bytes_out"])
                                                                    for layer in report["tiling"]["layers"]])
        report_outer_level(report, outer, state.tiled_layers, state.layouts, compilation.ctxt)
        report["level_peaks"] = level_peaks(self.memory_hierarchy, report["memory_levels"])
        generated.timings["tiling"] = {"model_build": state.times.model_build, "solve": state.times.solve,
                                       "allocation": state.times.allocation}
        return generated

    # -- the compilation's state, as the tiler reads it ------------------------------------------------

    @property
    def memory_hierarchy(self) -> MemoryHierarchy:
        """The hierarchy the memory level chose for this compile (``compilation.results[MemoryHierarchy]``)."""
        return self.compilation.results[MemoryHierarchy]

    @property
    def platform(self) -> Platform:
        """The platform data; the tiler needs its transfer primitives and tile constraints."""
        platform = self.compilation.platform
        if platform is None:
            raise DeeployError(f"tiler {self.tiler_name!r} needs a platform described as data "
                               f"(deeploy_core.platform.Platform), which {self.compilation.platform_name!r} lacks")
        return platform

    @property
    def ctxt(self) -> NetworkContext:
        """The network context of this compile (``compilation.ctxt``)."""
        return self.compilation.ctxt

    @property
    def state(self) -> TilingState:
        """What :meth:`tile` computed (``compilation.results[TilingState]``)."""
        return self.compilation.results[TilingState]

    @property
    def memory_plan(self) -> MemoryPlan:
        """The home level's arena, planned by the platform deployer's ``bind``."""
        plan = self.compilation.memory_plan
        if plan is None:
            raise DeeployError("tiling needs the arena plan of bind: run the stages in order (deploy)")
        return plan

    # -- the seed's interface ----------------------------------------------------------------------------

    @property
    def compute_level(self) -> str:
        return self.memory_hierarchy.compute_level

    @property
    def parallelism(self) -> ClusterParallelism | None:
        """The platform's cluster, if its cores share the tiles (None: one core runs everything)."""
        parallelism: ClusterParallelism | None = self.platform.parallelism
        return parallelism

    @property
    def tile_alignment(self) -> int:
        """Alignment of the compute level's blocks (:mod:`deeploy_core.tiling.alignment`), the same for every layer."""
        if self._tile_alignment is None:
            self._tile_alignment = tile_alignment(self.tiled_candidates(), self.ctxt, self.memory_hierarchy.alignment)
        return self._tile_alignment

    @property
    def scratch_copies(self) -> int:
        """Scratch the model reserves per kernel: one copy per core on a cluster (an upper bound of the shares)."""
        return self.parallelism.cores if self.parallelism is not None else 1

    def tile(self, tilingSolution: TilingSolution | None = None, memoryMap: dict[str, Any] | None = None) -> None:
        """Tile every layer: solve (or take ``tilingSolution``), build tiles, place them (or take ``memoryMap``)."""
        if (tilingSolution is None) != (memoryMap is None):
            raise DeeployError("tile() takes a tiling solution and a memory map together, or neither")
        self.compilation.results[TilingState] = TilingState()
        if tilingSolution is None:
            tilingSolution = self.computeTilingSolution()
        elif tilingSolution.buffering != self.buffering:
            raise DeeployError(f"the tiling to reuse was made with {tilingSolution.buffering} buffering but tiler "
                               f"{self.tiler_name!r} uses {self.buffering} buffering; use --buffering "
                               f"{tilingSolution.buffering} or drop --tiler")
        self.compilation.results[TilingSolution] = tilingSolution
        try:
            self._place(tilingSolution, memoryMap)
            if memoryMap is None:
                self._unfuse_staged_patterns()
        except DeeployError as error:
            if not tilingSolution.patterns or memoryMap is not None:
                raise
            # A fused pattern the model let through can still fail where its layers alone fit (a kernel refusing a
            # halo tile's shape, the longer lifetimes overflowing the home level): tile layer by layer, and say so.
            self.compilation.warnings.append(f"fused tiling given up, every layer tiled alone: {error}")
            try:
                self._retile(replace(tilingSolution, patterns=()))
            except TilingInfeasibleError as layerwise_error:
                # Both too big: name the smaller need, the fused one (no home storage for its intermediates),
                # which is what the default compile gets once the level has that size.
                fused_need = error.needed_bytes if isinstance(error, TilingInfeasibleError) else None
                if fused_need is not None and (layerwise_error.needed_bytes is None
                                               or fused_need <= layerwise_error.needed_bytes):
                    raise error from None
                raise

    def _unfuse_staged_patterns(self) -> None:
        """Tile layer by layer the patterns that stage a tensor beyond home when that hop is double-buffered.

        A fused loop takes both hops of a staged tensor at once (single
        buffering of the outer hop); the user's double buffering of that hop
        wins over fusing those layers, as long as the home level can hold the
        second staging slots: otherwise the patterns stay fused, single
        buffered on that hop, and a warning says so.  Unfusing changes the
        home arena, and with it what moves beyond home, so this repeats until
        no pattern stages anything (patterns only disappear, so it ends).
        """
        while True:
            outer = self.compilation.results.get(OuterLevelPlacement)
            solution = self.compilation.results[TilingSolution]
            if outer is None or outer.buffering != "double" or not solution.patterns:
                return
            staged = {entry.layers for entry in solution.patterns if set(entry.layers) & set(outer.staging)}
            if not staged:
                return
            kept = tuple(entry for entry in solution.patterns if entry.layers not in staged)
            try:
                self._retile(replace(solution, patterns=kept))
            except TilingInfeasibleError as error:
                self.compilation.warnings.append(
                    f"{outer.level} double buffering: {len(staged)} fused pattern(s) keep single buffering of the "
                    f"{outer.level} hop, since tiling their layers alone does not fit ({error})")
                self._retile(solution)
                return

    def _retile(self, solution: TilingSolution) -> None:
        """Start the tiling state afresh (keeping the time spent so far) and tile with ``solution``."""
        self.compilation.results[TilingState] = TilingState(times=self.state.times)
        self.compilation.results[TilingSolution] = solution
        self._place(solution, None)

    def _place(self, tilingSolution: TilingSolution, memoryMap: dict[str, Any] | None) -> None:
        """Build the solution's tiles, place them in the compute level and check every level's capacity."""
        state = self.state
        state.tiled_layers = self.computeTilingSchedule(tilingSolution)
        if state.patterns or self._tile_only:  # fused lifetimes, or back to the layer-wise plan after a fallback
            self._replan_arena()
        self.testTilingSolutionCorrectness(state.tiled_layers)
        state.layouts = self.computeMemoryMap(state.tiled_layers, memoryMap)
        self.testMemoryMapCorrectness()
        self.annotateMemoryLevel()
        try:  # tensors the home level cannot hold move beyond it (L3), if the hierarchy and platform have one
            place_outer_level(self.compilation, state, self.memory_hierarchy, self.platform.placement)
        except OuterLevelTooSmall as error:
            raise TilingInfeasibleError(str(error), error.level, error.needed_bytes) from None
        for name, entry in self.memory_level_report().items():
            if entry["capacity"] is not None and entry["used"] > entry["capacity"]:
                raise TilingInfeasibleError(f"{name} needs at least {entry['used']} bytes (arena {entry['arena']}, "
                                            f"tables {entry['tables']}, static {entry['static']}) but has {entry['capacity']}",
                                            name, int(entry["used"]))

    def tiled_candidates(self) -> list[Layer]:
        """Layers that run code (views cost nothing and are not tiled)."""
        return [layer for layer in self.compilation.layers if "alias_of" not in layer.representation]

    def constraint_of(self, layer: Layer) -> TileConstraint:
        """The kernel's own constraint, else the platform's policy for the op, else the core's geometry."""
        return tile_constraint_of(layer, self.platform.tile_constraints)

    def layer_models(self) -> list[LayerModel]:
        """The CP description of every tiled layer, with the whole compute level as budget."""
        home_size = self.memory_hierarchy.level(self.memory_hierarchy.default_level).size  # where tables are stored
        budget = ModelBudget(self._capacity(), self.tile_alignment, BUFFERING_SLOTS[self.buffering],
                             self.scratch_copies, home_size)
        candidates, models = self.tiled_candidates(), []
        for number, layer in enumerate(candidates, 1):
            self.progress.step(number, len(candidates), f"tiling model: {layer_label(layer)}")
            models.append(layer_model(layer, self.constraint_of(layer), self.ctxt, budget))
        return models

    def whole_axes(self, layer: Layer) -> dict[int, str]:
        """The output axes longer than 1 the tiler may not cut for ``layer``, each with the reason."""
        return whole_axes(layer, self.constraint_of(layer), self.ctxt)

    def readable_inputs(self, layer: Layer) -> set[int]:
        """Inputs of ``layer`` it may read in place from the home level if nothing else fits."""
        return readable_inputs(layer, self.constraint_of(layer), self.ctxt)

    def home_inputs(self) -> dict[str, set[int]]:
        """Per layer the solution lets read constants in place (by C name), the indices of those inputs.

        A name the layer may not read in place (a hand-edited ``--tiling-from`` file) is an error, not a guess.
        """
        chosen = self.compilation.results[TilingSolution].home_inputs
        result: dict[str, set[int]] = {}
        for layer in self.tiled_candidates():
            if layer.c_name not in chosen:
                continue
            allowed = {layer.node.inputs[index].name: index for index in self.readable_inputs(layer)}
            wrong = sorted(set(chosen[layer.c_name]) - set(allowed))
            if wrong:
                raise DeeployError(f"the tiling solution reads {wrong[0]!r} in place for layer {layer.name!r} "
                                   f"({layer.op_type}), which only a constant every tile reads whole may be")
            result[layer.c_name] = {allowed[name] for name in chosen[layer.c_name]}
        return result

    def computeTilingSolution(self) -> TilingSolution:
        """Solve the one CP-SAT model; on failure, say which layer needs how much."""
        started = time.perf_counter()
        models = self.layer_models()
        built = time.perf_counter()
        co_optimising = self.allocator if isinstance(self.allocator, TilingModelAllocator) else None
        self.progress.task(f"tiling: solving {len(models)} layers")
        result = solve_tiling(models, self.strategy, self.seed, self.time_limit, co_optimising)
        state = self.state
        state.placement_orders = result.orders
        state.times.model_build += built - started
        state.times.solve += time.perf_counter() - built
        if result.tiles is None:
            if result.status != "INFEASIBLE":
                raise TilingSolveStoppedError(
                    f"tiling: CP-SAT stopped ({result.status}) at its deterministic limit of {self.time_limit:g} before "
                    f"finding a tiling of {len(models)} layers into {self.compute_level} ({self._capacity()} bytes); "
                    f"that is not a proof of infeasibility: a larger {self.compute_level} size makes the search easier")
            raise self.diagnose(models)
        layers = {name: LayerTiling(name, tiles) for name, tiles in result.tiles.items()}
        patterns: tuple[PatternTiling, ...] = ()
        if self.fusion == "auto":
            fused = time.perf_counter()
            self.progress.task("tiling: choosing fused patterns")
            patterns = tuple(PatternTiling(pattern.names, tile)
                             for pattern, tile in self._planner(models, tuple(result.home_inputs)).plan(result.tiles))
            state.times.solve += time.perf_counter() - fused
        return TilingSolution(layers, self.strategy, self.buffering,
                              info={"status": result.status, "objective": result.objective}, patterns=patterns,
                              home_tables=result.home_tables, home_inputs=result.home_inputs)

    def _planner(self, models: list[LayerModel], unfusable: tuple[str, ...] = ()) -> FusionPlanner:
        layers = self.tiled_candidates()
        return FusionPlanner(self.ctxt, layers, {model.name: model for model in models},
                             {layer.c_name: self.constraint_of(layer) for layer in layers},
                             {t.name for t in self.compilation.graph.outputs}, BUFFERING_SLOTS[self.buffering],
                             self.seed, self.time_limit, self.compilation.layers, frozenset(unfusable))

    def _replan_arena(self) -> None:
        """Plan the home arena again for the fused patterns' lifetimes (:mod:`deeploy_core.tiling.fusion.lifetimes`)."""
        compilation, ctxt = self.compilation, self.ctxt
        for name in self._tile_only:  # back home, should a fallback have dropped their patterns
            ctxt[name].memory_level = self.memory_hierarchy.default_level
        compilation.memory_plan = plan_arena(
            compilation.layers, ctxt, compilation.allocator, compilation.allocator_name,
            self.memory_plan.alignment, allocator_origin(compilation.host, compilation.allocator_name),
            fused_lifetimes(compilation.layers, ctxt, self.state.patterns))
        self._tile_only = intermediate_tensors(self.state.patterns)
        for name in self._tile_only:  # no home storage: its tiles live in the compute level only
            ctxt[name].offset, ctxt[name].memory_level = None, self.compute_level

    def diagnose(self, models: list[LayerModel] | None = None) -> TilingInfeasibleError:
        """The one-line error naming the layer that needs the most of the compute level (:mod:`.diagnosis`)."""
        return diagnose(models or self.layer_models(), self.compilation.layers, self.compute_level, self._capacity(),
                        self.compilation.allocator_name, self.time_limit, self.whole_axes, self.progress)

    def minimum_level_size(self) -> int:
        """The smallest compute-level size this tiler can tile the network into (a proven lower bound)."""
        return minimum_level_size(self.layer_models(), self.time_limit)

    def computeTilingSchedule(self, solution: TilingSolution) -> list[TiledLayer]:
        """Tiles and kernel variants of every layer, in layer order."""
        tiled_layers = []
        candidates = self.tiled_candidates()
        home_size = self.memory_hierarchy.level(self.memory_hierarchy.default_level).size  # where tables are stored
        for number, layer in enumerate(candidates, 1):
            self.progress.step(number, len(candidates), f"tiling: building tiles of {layer_label(layer)}")
            tiling = solution.layers.get(layer.c_name)
            if tiling is None:
                raise DeeployError(f"the tiling solution has no entry for layer {layer.c_name!r} ({layer.name!r})")
            tiled_layers.append(build_tiles(layer, self.ctxt, self.constraint_of(layer), tiling.tile))
        self._apply_patterns(solution, tiled_layers)
        splits: dict[str, LayerSplit] = self.state.splits
        splits.clear()
        if self.parallelism is not None:
            for tiled in tiled_layers:
                splits[tiled.layer.c_name] = split_layer(
                    tiled, self.ctxt, self.constraint_of(tiled.layer), self.parallelism.cores)
        return tiled_layers

    def _apply_patterns(self, solution: TilingSolution, tiled_layers: list[TiledLayer]) -> None:
        """Replace the tiles of every fused pattern's layers by the pattern's (one tile loop for the chain)."""
        state = self.state
        state.patterns, state.pattern_costs = [], {}
        if solution.patterns:
            for pattern, cost in self._planner([]).apply(solution.patterns, tiled_layers, self.tiled_candidates()):
                state.patterns.append(pattern)
                state.pattern_costs[pattern.key] = cost

    def testTilingSolutionCorrectness(self, tiled_layers: list[TiledLayer]) -> None:
        """Every output element is written by exactly one tile (fused intermediates: what their consumer reads);
        every box lies inside its tensor (:func:`~deeploy_core.tiling.verification.check_tiles`)."""
        check_tiles(tiled_layers, self.state.patterns, self.ctxt)

    def computeMemoryMap(self, tiled_layers: list[TiledLayer], memoryMap: dict[str, Any] | None = None
                         ) -> dict[str, LayerLayout]:
        """Place each unit's (layer's or fused pattern's) tables, tile buffers and scratch with the allocator."""
        compilation = self.compilation
        placer = LevelPlacer(self.state, self.ctxt, self.compute_level, self._capacity(), self.tile_alignment,
                             BUFFERING_SLOTS[self.buffering], self.scratch_copies, self.allocator,
                             compilation.allocator_name, allocator_origin(compilation.host, compilation.allocator_name),
                             self.progress)
        return placer.place(tiled_layers, set(compilation.results[TilingSolution].home_tables), self.home_inputs(),
                            memoryMap)

    def testMemoryMapCorrectness(self) -> None:
        """Each layer's blocks are disjoint, aligned and within the compute level."""
        check_level_maps(self.state, self.tile_alignment)

    def annotateMemoryLevel(self) -> None:
        """Record on each layer which level its tiles live in (the buffers keep their home level)."""
        for tiled in self.state.tiled_layers:
            tiled.layer.representation.setdefault("tile_level", self.compute_level)

    def worstCaseBufferSize(self) -> dict[str, int]:
        """Bytes per level, everything the generated code places there (IO included)."""
        return {name: entry["used"] for name, entry in self.memory_level_report().items()}

    # -- reports -----------------------------------------------------------------------------------------

    def memory_level_report(self) -> dict[str, dict[str, Any]]:
        """report.json's ``memory_levels``: per level its capacity and bytes used (arena, tables, static data)."""
        return memory_level_report(self.state, self.ctxt, self.memory_hierarchy, self.memory_plan.arena_bytes,
                                   self.compilation.results.get(OuterLevelPlacement), self._capacity(), self.buffering)

    def tiling_report(self) -> dict[str, Any]:
        """report.json's ``tiling`` (:func:`~deeploy_core.tiling.tiling_report.tiling_report`)."""
        settings = TilerSettings(self.tiler_name, self.strategy, self.buffering, self.fusion)
        return tiling_report(self.state, self.ctxt, self.memory_hierarchy, self.compilation.results[TilingSolution],
                             settings, self.parallelism, self.whole_axes)

    # -- helpers -----------------------------------------------------------------------------------------

    def _capacity(self) -> int:
        size = self.memory_hierarchy.level(self.compute_level).size
        if size is None:
            raise DeeployError(f"memory level {self.compute_level!r} has no size: give one (e.g. --l1 64000)")
        return size

    def _level_symbol(self) -> str:
        return f"dc_level_{self.compute_level.lower()}"

    def _level_pointer(self) -> str:
        return self.platform.transfers.level_pointer.format(name=self._level_symbol())
