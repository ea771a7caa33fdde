"""Lowering passes of the Cortex-M platforms, run after generic C's."""

from __future__ import annotations

from deeploy_core.plugin_api import Pass


def cortex_m_lowering() -> list[Pass]:
    """The passes that put CMSIS-NN's layers in its layout (channels last), remove the copies that cancel, and
    store fully connected weights as the [N, K] rows CMSIS-NN reads (after the layout pass, which may have
    permuted them)."""
    from deeploy_cortex_m.layout import CancelTransposes, ChannelsLastLayers
    from deeploy_cortex_m.ops.fc_weights import FullyConnectedWeightsRowMajor

    return [ChannelsLastLayers(), CancelTransposes(), FullyConnectedWeightsRowMajor()]
