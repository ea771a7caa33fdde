"""Tiling's first half: the CP model of every layer, its solution, the fused patterns chosen from it, the diagnosis.

The model of each layer comes from :mod:`.layer_models`, the solver from
:mod:`.cp_model`, the fused patterns from :mod:`.fusion.planner`; this module
feeds them one compile (:class:`~deeploy_core.tiling.tiler_setup.TilerSetup`)
and turns their answer into the :class:`~deeploy_core.tiling.solution.TilingSolution`
that ``--tiling-from`` can reuse, or into the one-line error that says which
layer needs how much.
"""

from __future__ import annotations

import time

from deeploy_core.allocation import TilingModelAllocator
from deeploy_core.errors import DeeployError
from deeploy_core.mapping import Layer
from deeploy_core.tiling.cp_model import LayerModel, solve_tiling
from deeploy_core.tiling.diagnosis import diagnose, layer_label
from deeploy_core.tiling.errors import TilingInfeasibleError, TilingSolveStoppedError
from deeploy_core.tiling.fusion.planner import FusionPlanner
from deeploy_core.tiling.layer_models import ModelBudget, layer_model, readable_inputs, whole_axes
from deeploy_core.tiling.solution import LayerTiling, PatternTiling, TilingSolution
from deeploy_core.tiling.tiler_setup import TilerSetup


def layer_models(setup: TilerSetup) -> list[LayerModel]:
    """The CP description of every tiled layer, with the whole compute level as budget."""
    budget = ModelBudget(setup.capacity, setup.tile_alignment, setup.options.slots, setup.scratch_copies,
                         setup.home_size)
    candidates, models = setup.candidates(), []
    for number, layer in enumerate(candidates, 1):
        setup.progress.step(number, len(candidates), f"tiling model: {layer_label(layer)}")
        models.append(layer_model(layer, setup.constraint_of(layer), setup.ctxt, budget))
    return models


def axes_kept_whole(setup: TilerSetup, layer: Layer) -> dict[int, str]:
    """The output axes longer than 1 the tiler may not cut for ``layer``, each with the reason."""
    return whole_axes(layer, setup.constraint_of(layer), setup.ctxt)


def home_inputs(setup: TilerSetup, solution: TilingSolution) -> dict[str, set[int]]:
    """Per layer ``solution`` lets read constants in place (by C name), the indices of those inputs.

    A name the layer may not read in place (a hand-edited ``--tiling-from`` file) is an error, not a guess.
    """
    result: dict[str, set[int]] = {}
    for layer in setup.candidates():
        if layer.c_name not in solution.home_inputs:
            continue
        allowed = {layer.node.inputs[index].name: index
                   for index in readable_inputs(layer, setup.constraint_of(layer), setup.ctxt)}
        wrong = sorted(set(solution.home_inputs[layer.c_name]) - set(allowed))
        if wrong:
            raise DeeployError(f"the tiling solution reads {wrong[0]!r} in place for layer {layer.name!r} "
                               f"({layer.op_type}), which only a constant every tile reads whole may be")
        result[layer.c_name] = {allowed[name] for name in solution.home_inputs[layer.c_name]}
    return result


def solve(setup: TilerSetup) -> TilingSolution:
    """Solve the one CP-SAT model (and, with fusion, choose the patterns); on failure, say which layer needs how much."""
    options, state = setup.options, setup.state
    started = time.perf_counter()
    models = layer_models(setup)
    built = time.perf_counter()
    co_optimising = setup.allocator if isinstance(setup.allocator, TilingModelAllocator) else None
    setup.progress.task(f"tiling: solving {len(models)} layers")
    result = solve_tiling(models, options.strategy, options.seed, options.time_limit, co_optimising)
    state.placement_orders = result.orders
    state.times.model_build += built - started
    state.times.solve += time.perf_counter() - built
    if result.tiles is None:
        if result.status != "INFEASIBLE":
            level = setup.compute_level
            raise TilingSolveStoppedError(
                f"tiling: CP-SAT stopped ({result.status}) at its deterministic limit of {options.time_limit:g} before "
                f"finding a tiling of {len(models)} layers into {level} ({setup.capacity} bytes); "
                f"that is not a proof of infeasibility: a larger {level} size makes the search easier")
        raise diagnosis(setup, models)
    layers = {name: LayerTiling(name, tiles) for name, tiles in result.tiles.items()}
    patterns: tuple[PatternTiling, ...] = ()
    if options.fusion == "auto":
        fused = time.perf_counter()
        setup.progress.task("tiling: choosing fused patterns")
        patterns = tuple(PatternTiling(pattern.names, tile)
                         for pattern, tile in planner(setup, models, tuple(result.home_inputs)).plan(result.tiles))
        state.times.solve += time.perf_counter() - fused
    return TilingSolution(layers, options.strategy, options.buffering,
                          info={"status": result.status, "objective": result.objective}, patterns=patterns,
                          home_tables=result.home_tables, home_inputs=result.home_inputs)


def planner(setup: TilerSetup, models: list[LayerModel], unfusable: tuple[str, ...] = ()) -> FusionPlanner:
    """The fused-pattern planner of this compile (``unfusable``: layers that read a constant in place)."""
    layers = setup.candidates()
    return FusionPlanner(setup.ctxt, layers, {model.name: model for model in models},
                         {layer.c_name: setup.constraint_of(layer) for layer in layers},
                         {t.name for t in setup.compilation.graph.outputs}, setup.options.slots,
                         setup.options.seed, setup.options.time_limit, setup.compilation.layers, frozenset(unfusable))


def diagnosis(setup: TilerSetup, models: list[LayerModel] | None = None) -> TilingInfeasibleError:
    """The one-line error naming the layer that needs the most of the compute level (:mod:`.diagnosis`)."""
    return diagnose(models or layer_models(setup), setup.compilation.layers, setup.compute_level, setup.capacity,
                    setup.compilation.allocator_name, setup.options.time_limit,
                    lambda layer: axes_kept_whole(setup, layer), setup.progress)
