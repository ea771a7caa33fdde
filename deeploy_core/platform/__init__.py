"""Platform descriptions."""

from deeploy_core.platform.model import Engine, Platform, RuntimeLibrary
from deeploy_core.platform.placement import STATIC_ARRAYS, StaticPlacement

__all__ = ["STATIC_ARRAYS", "Engine", "Platform", "RuntimeLibrary", "StaticPlacement"]
