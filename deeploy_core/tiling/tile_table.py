"""The tile table of a tiled layer: one row per tile, ``variant, input offsets…, output offsets…``.

The offsets are element offsets of the box starts in the home tensors; the
transfer functions read them from the row to address a tile's boxes, the
kernels' switch reads the variant.  The table is a constant array of
``Network.c``, copied into the compute level at the start of the layer when the
layout gives it a place there (the loop then reads the copy).
"""

from __future__ import annotations

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.strides import element_strides
from deeploy_core.tiling.tiles import TiledLayer


def table_columns(tiled: TiledLayer) -> int:
    return 1 + len(tiled.layer.node.inputs) + len(tiled.tiles[0].outputs)


def table_rows(tiled: TiledLayer, ctxt: NetworkContext) -> list[list[int]]:
    node = tiled.layer.node
    rows = []
    for tile in tiled.tiles:
        row = [tile.variant]
        for index, box in enumerate(tile.inputs):
            if box is None:
                row.append(0)
                continue
            strides = element_strides(ctxt[node.inputs[index].name].shape)
            row.append(sum(start * stride for (start, _), stride in zip(box, strides)))
        outputs = [t for t in node.outputs if t.name]
        for index, box in enumerate(tile.outputs):
            strides = element_strides(ctxt[outputs[index].name].shape)
            row.append(sum(start * stride for (start, _), stride in zip(box, strides)))
        rows.append(row)
    return rows


def table_definition(tiled: TiledLayer, ctxt: NetworkContext, prefix: str) -> str:
    """The file-scope constant ``<prefix>_tiles`` holding the table."""
    rows = table_rows(tiled, ctxt)
    return (f"static const int32_t {prefix}_tiles[{len(rows) * table_columns(tiled)}] = {{\n    "
            + ",\n    ".join(", ".join(str(v) for v in row) for row in rows) + "\n};")


def table_lines(layout: LayerLayout, prefix: str, level_pointer: str, suffix: str = "") -> tuple[list[str], list[str]]:
    """The declaration of ``table{suffix}`` and the statements filling it (the leader's, on a cluster).

    The table is copied into the compute level at the start of the layer, or
    (``layout.table_offset`` None) read in place from its constant array.
    """
    if layout.table_offset is None:
        return [f"const int32_t *table{suffix} = {prefix}_tiles;"], []
    declaration = [f"uint8_t *table_bytes{suffix} = {level_pointer} + {layout.table_offset};",
                   f"const int32_t *table{suffix} = (const int32_t *)table_bytes{suffix};"]
    copy = [f"for (int32_t i = 0; i < {layout.table_bytes}; ++i) "
            f"table_bytes{suffix}[i] = ((const uint8_t *){prefix}_tiles)[i];"]
    return declaration, copy
