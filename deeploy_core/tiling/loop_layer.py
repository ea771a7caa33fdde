"""One layer's part of a tile loop: its table, transfer functions and kernels, and what the loop waits for.

The tile loop (:mod:`deeploy_core.tiling.tile_loop`) runs one layer or a
fused chain of them; it needs from each layer only the names of its transfer
functions, which of its transfers to wait for, its kernels' switch and where
its table is.  A :class:`LoopLayer` carries exactly that, with the file-scope
definitions (table, transfer functions) the layer's code brings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.staging import LayerStaging
from deeploy_core.tiling.tile_kernels import compute_lines
from deeploy_core.tiling.tile_table import table_columns, table_definition
from deeploy_core.tiling.tiles import TiledLayer
from deeploy_core.tiling.transfer_functions import transfer_functions
from deeploy_core.tiling.transfers import TransferPrimitives

if TYPE_CHECKING:
    from deeploy_core.tiling.parallel import ClusterParallelism, LayerSplit


@dataclass(frozen=True)
class LoopLayer:
    """What the tile loop calls, waits for and computes for one layer."""

    prefix: str
    """C prefix of the layer's table (``<prefix>_tiles``) and transfer functions."""
    layout: LayerLayout
    columns: int
    """Entries per table row."""
    inputs: int
    """Inputs of the node (absent optional ones included): the size of the input future arrays."""
    outputs: int
    """Present outputs: the size of the output future arrays."""
    functions: dict[str, str]
    """Transfer functions' C names: ``fetch``, ``fetch_resident``, ``store`` (and ``fetch_outer``)."""
    compute: tuple[str, ...]
    """The kernels' switch, one line per item."""
    streamed: tuple[int, ...]
    """Inputs fetched tile by tile (their future waited for per tile)."""
    resident: tuple[int, ...]
    """Inputs fetched once before the loop."""
    stored: tuple[int, ...]
    """Outputs stored tile by tile (not a fused pattern's intermediate)."""
    outer_stored: tuple[int, ...]
    """Outputs whose outer hop the loop waits for in the background (pipelined outer hop only)."""
    definitions: tuple[str, ...]
    """File-scope C: a comment, the table, the transfer functions first emitted here."""


def loop_layer(tiled: TiledLayer, ctxt: NetworkContext, layout: LayerLayout, primitives: TransferPrimitives,
               level_pointer: str, prefix: str, shared: dict[str, str], parallel: ClusterParallelism | None,
               split: LayerSplit | None, staging: LayerStaging | None, outer_hop: bool) -> LoopLayer:
    """The loop's view of one tiled layer (``shared``, ``staging``, ``outer_hop``: see
    :func:`~deeploy_core.tiling.transfer_functions.transfer_functions`; ``split``: each variant's shares of
    the cores of ``parallel``)."""
    node = tiled.layer.node
    n_out = len([t for t in node.outputs if t.name])
    functions, definitions = transfer_functions(tiled, ctxt, layout, primitives, level_pointer, prefix, shared,
                                                staging, outer_hop)
    staged = ", tensors beyond the home level double buffered in it" if outer_hop else ""
    header = (f"/* {c_comment_text(tiled.layer.name)} ({c_comment_text(tiled.layer.op_type, 40)}): "
              f"{len(tiled.tiles)} tiles, {len(tiled.variants)} kernel variants{staged} */")
    fixed = layout.resident | layout.local_inputs | layout.home_inputs
    return LoopLayer(
        prefix=prefix,
        layout=layout,
        columns=table_columns(tiled),
        inputs=len(node.inputs),
        outputs=n_out,
        functions=functions,
        compute=tuple(compute_lines(tiled, ctxt, layout, level_pointer, parallel, split)),
        streamed=tuple(i for i, tensor in enumerate(node.inputs) if tensor.name and i not in fixed),
        resident=tuple(sorted(layout.resident)),
        stored=tuple(i for i in range(n_out) if i not in layout.local_outputs),
        outer_stored=tuple(sorted(staging.outputs)) if outer_hop and staging is not None else (),
        definitions=(header, table_definition(tiled, ctxt, prefix), *definitions),
    )
