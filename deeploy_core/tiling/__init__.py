"""Tiling: tile geometry per op, one CP-SAT model per network, tiled code generation, the tiler wrapper."""

from deeploy_core.tiling.solution import LayerTiling, TilingSolution
from deeploy_core.tiling.transfers import HOST_MEMCPY, TransferPrimitives

__all__ = ["HOST_MEMCPY", "LayerTiling", "TilingSolution", "TransferPrimitives"]
