"""The layers CMSIS-NN runs: mappers tried before generic C's, by op type."""

from __future__ import annotations

from deeploy_core.plugin_api import NodeMapper


def cmsis_mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """Op type -> the CMSIS-NN mappers tried before generic C's for it, on the DSP-extension path or (``mve``) on
    Helium (op types never overlap between families: each family maps its own)."""
    from deeploy_cortex_m.ops import elementwise, fully_connected, softmax
    from deeploy_cortex_m.ops.conv import conv_mappers
    from deeploy_cortex_m.ops.pooling import pool_mappers

    families = (conv_mappers(mve), pool_mappers(mve), fully_connected.mappers(mve), elementwise.mappers(mve),
                softmax.mappers(mve))
    merged: dict[str, tuple[NodeMapper, ...]] = {}
    for family in families:
        for op, mappers in family.items():
            assert op not in merged, f"two CMSIS-NN families map {op}"
            merged[op] = mappers
    return merged
