"""Lowering passes of the Cortex-M platforms, run after generic C's."""

from __future__ import annotations

from deeploy_core.plugin_api import Pass


def cortex_m_lowering() -> list[Pass]:
    """The passes that put CMSIS-NN's layers in its layout (channels last) and remove the copies that cancel."""
    from deeploy_cortex_m.layout import CancelTransposes, ChannelsLastLayers

    return [ChannelsLastLayers(), CancelTransposes()]
