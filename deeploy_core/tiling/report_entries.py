"""Per-layer entries of report.json's ``tiling.layers``: a layer's tile buffers and, on a cluster, its cores' work.

Kept out of the tiler wrapper, which assembles the entries: each is a plain
function of what the tiler computed (a layout, a core split).
"""

from __future__ import annotations

from typing import Any

from deeploy_core.tiling.layer_layout import LayerLayout
from deeploy_core.tiling.parallel import LayerSplit, split_summary
from deeploy_core.tiling.tiles import TiledLayer


def buffer_entry(layout: LayerLayout) -> dict[str, dict[str, int]]:
    """Per tile buffer: how many slots it has (2 for a streamed tensor when double buffering) and bytes per slot;
    a fused intermediate is listed once, as its producer's one-slot output."""
    entry: dict[str, dict[str, int]] = {}
    for index, (_, size) in sorted(layout.inputs.items()):
        if index not in layout.local_inputs:
            entry[f"in{index}"] = {"slots": 1 if index in layout.resident else layout.slots, "slot_bytes": size}
    for index, (_, size) in sorted(layout.outputs.items()):
        entry[f"out{index}"] = {"slots": 1 if index in layout.local_outputs else layout.slots, "slot_bytes": size}
    return entry


def cluster_entry(tiled: TiledLayer, split: LayerSplit | None, cores: int) -> dict[str, Any]:
    """Per-core work of a layer on a cluster (MACs, or output elements), predicted from its shares ({} unsplit)."""
    if split is None:
        return {}
    work = [0] * cores
    for tile in tiled.tiles:
        work = [a + b for a, b in zip(work, split.tile_work(tiled, tile, cores))]
    return {"cluster": {**split_summary(split, cores), "work": work}}
