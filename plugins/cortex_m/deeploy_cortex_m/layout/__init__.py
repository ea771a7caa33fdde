"""Channels-last lowering for CMSIS-NN: rewrite its layers into NHWC, then cancel the transposes that meet."""

from __future__ import annotations

from deeploy_cortex_m.layout.cancel_transposes import CancelTransposes
from deeploy_cortex_m.layout.to_channels_last import ChannelsLastLayers

__all__ = ["CancelTransposes", "ChannelsLastLayers"]
