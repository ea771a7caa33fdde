"""The CP-SAT description of a fused pattern: one layer model whose tensors are every tensor of the chain.

The variables are the last layer's output tile sizes.  Each earlier layer's
tensors get their extents composed back through the chain
(:mod:`~deeploy_core.tiling.fusion.extents`), so the model sees the halo each
tile size implies.  What the compute level must hold per tile: every outer
input (streamed ones once per buffering slot), every intermediate tile once
(it is produced and consumed within the tile), the last output per slot, each
layer's scratch and every layer's tiling table.  An axis of the last layer
that would cut an intermediate along an axis its producer cannot tile stays
whole.
"""

from __future__ import annotations

from dataclasses import replace

from deeploy_core.tiling.cp_model import LayerModel, TensorTerm, alignment_slack
from deeploy_core.tiling.fusion.extents import compose
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.geometry import Extent


def _term(models: list[LayerModel], position: int, block: str) -> TensorTerm | None:
    return next((t for t in models[position].tensors if t.block == block), None)


def pattern_model(pattern: FusedPattern, models: list[LayerModel], slots: int) -> LayerModel | None:
    """The pattern's model from its layers' own models (in pattern order); None when the chain cannot be tiled
    as one pattern (an intermediate its consumer reads in a shape its producer cannot compute per tile)."""
    last = models[-1]
    tensors: list[TensorTerm] = []
    whole: set[int] = set()
    outer: tuple[Extent, ...] = ()
    for position in range(len(models) - 1, -1, -1):
        model = models[position]
        link = pattern.links[position] if position < len(models) - 1 else None
        if link is not None:
            view = _term(models, position + 1, f"in{link}")
            if view is None:
                return None
            # This layer's output axes as the next layer reads them, in the pattern's axes.
            outer = view.extents if position + 1 == len(models) - 1 else tuple(compose(e, outer) for e in view.extents)
            for axis, extent in enumerate(outer):
                if extent.axis is not None and axis not in model.tiled_axes and extent.size_of(1) < model.out_shape[axis]:
                    whole.add(extent.axis)  # the producer cannot cut this axis: the pattern keeps it whole
        for term in model.tensors:
            if link is not None and term.block.startswith("out"):
                continue  # the intermediate: counted once, as its consumer's input
            is_local_input = position > 0 and term.block == f"in{pattern.links[position - 1]}"
            extents = term.extents if link is None else tuple(compose(e, outer) for e in term.extents)
            buffers = 1 if is_local_input else term.buffers
            tensors.append(replace(term, extents=extents, buffers=buffers, block=f"{position}:{term.block}"))
    free = tuple(axis for axis in last.tiled_axes if axis not in whole)
    # A streamed tensor whose extents no free axis moves is fetched once: one slot is enough.
    tensors = [replace(t, buffers=1) if t.buffers > 1 and all(e.axis is None or e.axis not in free for e in t.extents)
               else t for t in tensors]
    # Each layer's table is its own block: the model's one table slack covers one of them, the rest are added here.
    table_slacks = (len(models) - 1) * alignment_slack(4, last.alignment)
    return LayerModel(pattern.key, last.out_shape, free, tensors, sum(m.table_columns for m in models),
                      last.alignment, last.budget, extra_bytes=sum(m.extra_bytes for m in models) + table_slacks)

