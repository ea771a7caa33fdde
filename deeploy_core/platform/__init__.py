"""Platform descriptions."""

from deeploy_core.platform.model import Engine, Platform, RuntimeLibrary

__all__ = ["Engine", "Platform", "RuntimeLibrary"]
