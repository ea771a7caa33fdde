"""Why no tiling fits: the layer that needs the most of the compute level, how much, and what keeps it whole.

The message states only what the solver proved: "at least N" is a proven
lower bound per layer (each layer's most relaxed model solved for its
minimum), and a layer whose minimum was not proven says so.  When every
layer fits by size, the allocator placing the tiles is what failed, and the
message says that instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from deeploy_core.mapping import Layer
from deeploy_core.progress import Progress
from deeploy_core.tiling.cp_model import LayerModel, MemoryNeed, minimum_memory, most_relaxed
from deeploy_core.tiling.errors import TilingInfeasibleError


def layer_label(layer: Layer) -> str:
    """How progress and messages name a layer: its node name, or its position when the node has none."""
    return layer.name or f"#{layer.index}"


def _kept_whole(whole: dict[int, str]) -> str:
    """The diagnosis's last words: which output axes stay whole, when one reason covers them all."""
    reasons = sorted(set(whole.values()))
    if len(reasons) != 1:
        return ""
    axes = ", ".join(str(axis) for axis in sorted(whole))
    return f"; output axis {axes} stays whole: {reasons[0]}" if len(whole) == 1 else \
        f"; output axes {axes} stay whole: {reasons[0]}"


def diagnose(models: Sequence[LayerModel], layers: Sequence[Layer], level: str, capacity: int, allocator_name: str,
             time_limit: float, whole_axes_of: Callable[[Layer], dict[int, str]], progress: Progress
             ) -> TilingInfeasibleError:
    """The error naming, in one line, the layer of ``models`` that needs the most of ``level`` and how much."""
    worst: tuple[MemoryNeed, LayerModel] | None = None
    labels = {layer.c_name: layer_label(layer) for layer in layers}
    for number, model in enumerate(models, 1):
        progress.step(number, len(models), f"diagnosing: {labels.get(model.name, model.name)}")
        need = minimum_memory(most_relaxed(model), time_limit)
        if worst is None or need.at_least > worst[0].at_least:
            worst = (need, model)
    assert worst is not None
    need, model = worst
    layer = next(candidate for candidate in layers if candidate.c_name == model.name)
    name = layer_label(layer)
    if need.at_least <= capacity:
        return TilingInfeasibleError(
            f"{level}: no tiling of the network fits its {capacity} bytes with allocator {allocator_name!r} placing "
            f"the tiles, although each layer's tiles fit by size (the largest need, layer {name!r} ({layer.op_type}), "
            f"is {need.at_least} bytes); try another allocator", level, None)
    largest = max(most_relaxed(model).tensors,
                  key=lambda t: math.prod(e.full if e.axis is None else 1 for e in t.extents) * t.element_bytes)
    unproven = "" if need.proven else " (a proven lower bound: the search for the exact minimum hit its limit)"
    return TilingInfeasibleError(
        f"{level} needs at least {need.at_least} bytes for layer {name!r} ({layer.op_type}) but has {capacity}: even "
        f"its smallest tiles do not fit (the part of tensor {largest.name!r} that every tile needs is the largest"
        f"{_kept_whole(whole_axes_of(layer))}){unproven}", level, need.at_least)


def minimum_level_size(models: Sequence[LayerModel], time_limit: float) -> int:
    """The smallest compute-level size the layers can be tiled into (a proven lower bound)."""
    return max((minimum_memory(most_relaxed(model), time_limit).at_least for model in models), default=0)
