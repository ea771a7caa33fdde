"""The layers CMSIS-NN runs: mappers tried before generic C's, by op type."""

from __future__ import annotations

from deeploy_core.plugin_api import NodeMapper


def cmsis_mappers() -> dict[str, tuple[NodeMapper, ...]]:
    """Op type -> the CMSIS-NN mappers tried before generic C's for it."""
    from deeploy_cortex_m.ops import elementwise, fully_connected, softmax
    return {**fully_connected.MAPPERS, **elementwise.MAPPERS, **softmax.MAPPERS}
