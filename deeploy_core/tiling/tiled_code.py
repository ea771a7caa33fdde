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
from deeploy_core.tiling.codegen import emit_tiled_layer
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
                 parallelism: ClusterParallelism | None = None) -> None:
        self.state = state
        self.transfers = transfers
        self.level_pointer = level_pointer
        self.parallelism = parallelism
        self._tiled: dict[int, TiledLayer] = {tiled.layer.index: tiled for tiled in state.tiled_layers}
        self._shared: dict[str, str] = {}

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        tiled = self._tiled.get(block.layer.index)
        if tiled is None:
            return block
        key = tiled.layer.c_name
        body, definitions = emit_tiled_layer(
            tiled, ctxt, self.state.layouts[key], self.transfers, self.level_pointer, f"{key}_tiled", self._shared,
            self.parallelism, self.state.splits.get(key))
        block.body = [body]
        block.definitions.extend(definitions)
        return block
