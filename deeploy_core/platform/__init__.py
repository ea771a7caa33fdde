"""Platform descriptions."""

from deeploy_core.platform.model import Engine, Platform
from deeploy_core.platform.placement import STATIC_ARRAYS, StaticPlacement
from deeploy_core.platform.runtime_library import RuntimeLibrary
from deeploy_core.platform.runtime_of_network import network_runtime

__all__ = ["STATIC_ARRAYS", "Engine", "Platform", "RuntimeLibrary", "StaticPlacement", "network_runtime"]
