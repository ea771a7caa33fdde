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
from deeploy_core.tiling.codegen import emit_tiled_layer
from deeploy_core.tiling.fusion.codegen import emit_fused_pattern
from deeploy_core.tiling.fusion.pattern import FusedPattern
from deeploy_core.tiling.outer_level import OuterLevelPlacement
from deeploy_core.tiling.staged_code import emit_staged_layer
from deeploy_core.tiling.staging import LayerStaging
from deeploy_core.tiling.state import TilingState
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
        """Tensors beyond the home level: a layer with one gets two-hop transfers (:mod:`.staged_code`)."""
        self._tiled: dict[int, TiledLayer] = {tiled.layer.index: tiled for tiled in state.tiled_layers}
        self._shared: dict[str, str] = {}
        self._patterns: dict[str, FusedPattern] = {name: pattern for pattern in state.patterns for name in pattern.names}

    def _apply_fused(self, block: ExecutionBlock, ctxt: NetworkContext, pattern: FusedPattern) -> ExecutionBlock:
        """The pattern's loop replaces its last layer's body; the earlier layers run inside it and emit nothing."""
        key = block.layer.c_name
        if key != pattern.key:
            block.body = [f"/* {c_comment_text(block.layer.name)}: computed tile by tile in the fused loop of "
                          f"{c_comment_text(pattern.layers[-1].name)} */"]
            return block
        members = [self._tiled[layer.index] for layer in pattern.layers]
        body, definitions = emit_fused_pattern(
            members, ctxt, [self.state.layouts[name] for name in pattern.names], self.transfers, self.level_pointer,
            f"{key}_fused", self._shared, self.parallelism, [self.state.splits.get(name) for name in pattern.names],
            [self._staging(name) for name in pattern.names])
        block.body = [body]
        block.definitions.extend(definitions)
        return block

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        tiled = self._tiled.get(block.layer.index)
        if tiled is None:
            return block
        key = tiled.layer.c_name
        pattern = self._patterns.get(key)
        if pattern is not None:
            return self._apply_fused(block, ctxt, pattern)
        staging = self._staging(key)  # tensors beyond home: pipelined outer hop (staged_code) or both hops at once
        emit = emit_staged_layer if staging is not None and staging.pipelined else emit_tiled_layer
        body, definitions = emit(
            tiled, ctxt, self.state.layouts[key], self.transfers, self.level_pointer, f"{key}_tiled", self._shared,
            self.parallelism, self.state.splits.get(key), staging)
        block.body = [body]
        block.definitions.extend(definitions)
        return block

    def _staging(self, key: str) -> LayerStaging | None:
        """The staging buffers of layer ``key``'s tensors beyond the home level (None: every tensor at home)."""
        return self.outer.staging.get(key) if self.outer is not None else None
