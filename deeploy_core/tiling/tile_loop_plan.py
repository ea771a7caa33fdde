"""What varies between tile loops: core mode × buffering × staging × fusion (issue 34).

The tiler emitted its loops from four schedulers (layer-wise on one core and
on a cluster, pipelined staging, fused chains); one scheduler
(:mod:`deeploy_core.tiling.tile_loop`) now emits them all from this plan.  A
plan is decided per loop by the tiler's code transformation
(:mod:`deeploy_core.tiling.tiled_code`) from the platform, the layout's
buffering, the layer's staging and its fused pattern.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from deeploy_core.errors import DeeployError

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism


@dataclass(frozen=True)
class TileLoopPlan:
    """Core mode × buffering × staging × fusion of one tile loop."""

    cluster: ClusterParallelism | None
    """The cluster the loop is forked on (None: one core)."""
    slots: int
    """Compute-level buffering slots of a streamed tile: 1 (single) or 2 (double)."""
    outer_hop: bool
    """Whether the loop pipelines the outer → home hop of tensors beyond the home level (staging slot ``t & 1``)."""
    layers: int
    """Layers per tile: 1, or the length of a fused chain."""

    def __post_init__(self) -> None:
        if self.slots not in (1, 2):
            raise DeeployError(f"a tile loop has 1 or 2 buffering slots, not {self.slots}")
        if self.layers < 1:
            raise DeeployError("a tile loop runs at least one layer")
        if self.outer_hop and self.layers > 1:
            raise DeeployError("a fused chain takes both hops of its staged tensors inside its transfer functions")

    @property
    def chain(self) -> bool:
        return self.layers > 1

    # The schedulers this one replaced (layer-wise, pipelined staging, fused) spelled a few statements each its
    # own way.  The generated C is kept byte for byte (bench/output_digests.py), so these properties say where:
    # a layer alone without a pipelined outer hop keeps the layer-wise spelling.  Spelling every loop alike
    # would drop them, at the price of new text in every tiled Network.c.

    @property
    def _layer_wise(self) -> bool:
        return not self.chain and not self.outer_hop

    @property
    def table_filled_at_declaration(self) -> bool:
        """On one core, a layer alone fills its table right after declaring it (the others after the futures)."""
        return self._layer_wise and self.cluster is None

    @property
    def lone_leader_statement_inline(self) -> bool:
        """A layer alone guards a lone leader statement before and after its loop body on the ``if``'s line."""
        return self._layer_wise

    @property
    def futures_marked_used(self) -> bool:
        """Whether the loop ends by casting its future arrays to void (all but a layer alone on one core)."""
        return not (self._layer_wise and self.cluster is None)

    def title(self, subject: str, count: int) -> str:
        """The comment opening the loop."""
        return (f"/* {subject}: {count} tiles, {'double' if self.slots == 2 else 'single'} buffering"
                + (", double buffering of the outer hop" if self.outer_hop else "")
                + (f", {self.cluster.cores} cores" if self.cluster is not None else "") + " */")
