"""The tiler deployer wrapper: tiles every layer into the compute level after ``bind``.

It wraps a memory-aware deployer (one whose memory level put a
:class:`~deeploy_core.memory.MemoryHierarchy` into ``compilation.results``).
What it computes goes into the compilation too: ``results[TilingSolution]``,
``results[TilingState]`` (tiles, layouts, core splits, the compute level's
map) and, for ``generate``, a code transformation per tiled layer
(:class:`~deeploy_core.tiling.tiled_code.TiledLayerCode`) plus the level's
declaration in the network's code additions.  ``bind()``
tiles automatically; with ``--tiling-from`` it takes a solution and memory map
exported from an earlier compile instead and reproduces its code exactly.  The
wrapper only orders the steps: solving is :mod:`.solving`, building and placing
the tiles :mod:`.placing`, both over one :class:`~.tiler_setup.TilerSetup`.  Every compile runs the correctness checks on
whatever solution it uses: tiles cover each output exactly once and stay inside
every tensor, and each level's memory map is verified independently of the
allocator that made it, against the level's capacity.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.codegen.arena_views import union_members
from deeploy_core.deployer import ComposedDeployer, DeployerWrapper
from deeploy_core.errors import DeeployError
from deeploy_core.ir import NetworkContext
from deeploy_core.lowering.split_reductions import SplitReductions
from deeploy_core.mapping import Layer
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.platform import Platform
from deeploy_core.tiling.cp_model import LayerModel
from deeploy_core.tiling.errors import TilingInfeasibleError, TilingSolveStoppedError
from deeploy_core.tiling.geometry import TileConstraint
from deeploy_core.tiling.outer_level import OuterLevelPlacement, report_outer_level
from deeploy_core.tiling.placing import MemoryMap, level_usage, tile
from deeploy_core.tiling.solution import TilingSolution
from deeploy_core.tiling.solving import axes_kept_whole, layer_models
from deeploy_core.tiling.state import TilingState, TilingTimes
from deeploy_core.tiling.tiled_code import TiledLayerCode
from deeploy_core.tiling.tiler_options import BUFFERING_SLOTS, FUSION_MODES, TilerOptions
from deeploy_core.tiling.tiler_setup import TilerSetup
from deeploy_core.tiling.tiling_report import tiling_report
from deeploy_core.tiling.traffic import level_peaks, network_traffic

__all__ = ["BUFFERING_SLOTS", "FUSION_MODES", "TilerDeployerWrapper", "TilingInfeasibleError",
           "TilingSolveStoppedError", "TilingState", "TilingTimes"]


class TilerDeployerWrapper(DeployerWrapper):
    """Tiling for any memory-aware deployer; what it computes goes into the shared compilation's results.

    Its configuration is one :class:`~.tiler_options.TilerOptions` (name,
    strategy, buffering, fusion, seed, time limit; the defaults when None) and
    the allocator; the solution and memory map to reuse come from the
    compile's settings.
    """

    def __init__(self, inner: ComposedDeployer, allocator: object, options: TilerOptions | None = None) -> None:
        super().__init__(inner)
        if MemoryHierarchy not in self.compilation.results:
            raise DeeployError("the tiler needs a memory-aware deployer: choose a memory level (--memory-level)")
        # The tiler's own scheme, never a deployer option: one source of truth (--buffering only selects a tiler).
        self.options = options if options is not None else TilerOptions()
        self.setup = TilerSetup(self.compilation, self.options, allocator)
        self.compilation.scratch_in_compute_level = True  # known before parsing: kernels pick tile-sized scratch
        settings = self.compilation.settings
        self.reused_solution: TilingSolution | None = settings.tiling_solution
        self.reused_memory_map: MemoryMap | None = settings.memory_map

    # -- stages ----------------------------------------------------------------------------------------

    def lower(self) -> None:
        self.inner.lower()
        SplitReductions().apply_pass(self.compilation.graph, {})

    def bind(self) -> None:
        self.inner.bind()
        tile(self.setup, self.reused_solution, self.reused_memory_map)

    def generate(self) -> Any:
        compilation, setup = self.compilation, self.setup
        state, transfers = setup.state, setup.platform.transfers
        outer = compilation.results.get(OuterLevelPlacement)
        code = TiledLayerCode(state, transfers, setup.level_pointer(), setup.parallelism, outer)
        for tiled in state.tiled_layers:
            compilation.chain_contributions.setdefault(tiled.layer.index, []).append(code)
        level = setup.compute_level
        compilation.code.headers.extend(transfers.headers)
        compilation.code.definitions.extend([
            f"/* The {level} scratch memory: every tiled layer's tiles, tables and scratch ({state.level_peak} bytes). */",
            transfers.level_declaration.format(bytes=max(state.level_peak, 8), name=setup.level_symbol(),
                                                members=union_members(state.level_peak)),
        ])
        generated = self.inner.generate()
        report = generated.report
        report["memory_levels"] = level_usage(setup)
        report["tiling"] = self.tiling_report()
        report["traffic"] = network_traffic(setup.hierarchy, [(layer["bytes_in"], layer["bytes_out"])
                                                              for layer in report["tiling"]["layers"]])
        report_outer_level(report, outer, state.tiled_layers, state.layouts, compilation.ctxt)
        report["level_peaks"] = level_peaks(setup.hierarchy, report["memory_levels"])
        generated.timings["tiling"] = {"model_build": state.times.model_build, "solve": state.times.solve,
                                       "allocation": state.times.allocation}
        return generated

    def tiling_report(self) -> dict[str, Any]:
        """report.json's ``tiling`` (:func:`~deeploy_core.tiling.tiling_report.tiling_report`)."""
        return tiling_report(self.setup.state, self.ctxt, self.setup.hierarchy,
                             self.compilation.results[TilingSolution], self.options, self.setup.parallelism,
                             lambda layer: axes_kept_whole(self.setup, layer))

    # -- what tests and tools read of one compile --------------------------------------------------------

    @property
    def buffering(self) -> str:
        return self.options.buffering

    @property
    def platform(self) -> Platform:
        return self.setup.platform

    @property
    def ctxt(self) -> NetworkContext:
        return self.compilation.ctxt

    @property
    def state(self) -> TilingState:
        """What the tiling computed (``compilation.results[TilingState]``)."""
        return self.setup.state

    @property
    def scratch_copies(self) -> int:
        return self.setup.scratch_copies

    def layer_models(self) -> list[LayerModel]:
        """The CP description of every tiled layer (:func:`~deeploy_core.tiling.solving.layer_models`)."""
        return layer_models(self.setup)

    def constraint_of(self, layer: Layer) -> TileConstraint:
        return self.setup.constraint_of(layer)
