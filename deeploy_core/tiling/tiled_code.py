"""The tiler's code transformation: a tiled layer's kernel call becomes its tile loop.

Tiled code goes through each layer's code-transformation chain like any other
code: the tiler contributes this transformation to the compilation
(``compilation.chain_contributions``) for each layer it tiled, where it runs
first and replaces the layer's kernel call by the tile table, the transfer
functions and the schedule that runs the kernel tile by tile.  The
passes after it (memory bookkeeping, closure, plugins) see the tiled code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.loop_layer import loop_layer
from deeploy_core.tiling.outer_level import OuterLevelPlacement
from deeploy_core.tiling.staging import LayerStaging
from deeploy_core.tiling.state import TilingState
from deeploy_core.tiling.tile_loop import emit_tile_loop
from deeploy_core.tiling.tile_loop_plan import TileLoopPlan
from deeploy_core.tiling.tiles import TiledLayer
from deeploy_core.tiling.transfers import TransferPrimitives

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism


class TiledLayerCode:
    """Replaces a tiled layer's body by its tile loop and adds the loop's file-scope definitions.

    Transfer functions whose text is identical are emitted once, by the first
    layer that needs them, so the transformation keeps that record across the
    layers of one compile (blocks are built in layer order).
    """

    name = "tiling"

    def __init__(self, state: TilingState, transfers: TransferPrimitives, level_pointer: str,
                 parallelism: ClusterParallelism | None = None, outer: OuterLevelPlacement | None = None) -> None:
        self.state = state
        self.transfers = transfers
        self.level_pointer = level_pointer
        self.parallelism = parallelism
        self.outer = outer
        """Tensors beyond the home level: a layer with one gets two-hop transfers (:mod:`.transfer_functions`)."""
        self._tiled: dict[int, TiledLayer] = {tiled.layer.index: tiled for tiled in state.tiled_layers}
        self._shared: dict[str, str] = {}
        self._patterns: dict[str, FusedPattern] = {name: pattern for pattern in state.patterns for name in pattern.names}

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        tiled = self._tiled.get(block.layer.index)
        if tiled is None:
            return block
        key = tiled.layer.c_name
        pattern = self._patterns.get(key)
        if pattern is None:
            subject = c_comment_text(tiled.layer.name)
            body, definitions = self._tile_loop([tiled], [key], ctxt, f"{key}_tiled", subject)
        elif key != pattern.key:  # the pattern's loop replaces its last layer's body; the earlier ones run inside it
            block.body = [f"/* {c_comment_text(block.layer.name)}: computed tile by tile in the fused loop of "
                          f"{c_comment_text(pattern.layers[-1].name)} */"]
            return block
        else:
            members = [self._tiled[layer.index] for layer in pattern.layers]
            names = " -> ".join(c_comment_text(t.layer.name or t.layer.c_name) for t in members)
            body, definitions = self._tile_loop(members, list(pattern.names), ctxt, f"{key}_fused",
                                                f"fused pattern {names}")
        block.body = [body]
        block.definitions.extend(definitions)
        return block

    def _tile_loop(self, members: list[TiledLayer], keys: list[str], ctxt: NetworkContext, prefix: str,
                   subject: str) -> tuple[str, list[str]]:
        """(body, file-scope definitions) of the loop running ``members`` (layers ``keys``) tile by tile.

        A layer alone whose tensors beyond home have two staging slots gets its
        outer hop pipelined by the loop; a fused chain takes both hops inside
        its transfer functions.
        """
        stagings = [self._staging(key) for key in keys]
        outer_hop = len(keys) == 1 and stagings[0] is not None and stagings[0].pipelined
        plan = TileLoopPlan(cluster=self.parallelism, slots=self.state.layouts[keys[-1]].slots, outer_hop=outer_hop,
                            layers=len(keys))
        layers = [loop_layer(tiled, ctxt, self.state.layouts[key], self.transfers, self.level_pointer,
                             f"{tiled.layer.c_name}_tiled", self._shared, self.parallelism, self.state.splits.get(key),
                             staging, outer_hop)
                  for key, tiled, staging in zip(keys, members, stagings)]
        body, task = emit_tile_loop(plan, layers, subject, len(members[-1].tiles), prefix, self.level_pointer,
                                    self.transfers)
        return body, [definition for layer in layers for definition in layer.definitions] + task

    def _staging(self, key: str) -> LayerStaging | None:
        """The staging buffers of layer ``key``'s tensors beyond the home level (None: every tensor at home)."""
        return self.outer.staging.get(key) if self.outer is not None else None
