"""Tile transfers with the cluster DMA, and L1 as the SDK hands it out (a run-time base address)."""

from __future__ import annotations

from deeploy_core.plugin_api import TransferPrimitives

CLUSTER_DMA = TransferPrimitives(
    headers=("pulp_hal.h", "dc_pulp_transfer.h"),
    future_type="dc_pulp_future",
    to_tile="{future} = dc_pulp_copy_to_tile({tile}, {tensor}, {element_bytes}, {rank}, {box}, {strides});",
    from_tile="{future} = dc_pulp_copy_from_tile({tensor}, {tile}, {element_bytes}, {rank}, {box}, {strides});",
    wait="dc_pulp_wait(&{future});",
    level_declaration="",
    level_pointer="pulp_l1_base()",
)
"""Asynchronous box transfers L2 ↔ L1; a destination is readable only after ``dc_pulp_wait``."""
