"""Plugin discovery, loading and the extension registry."""

from deeploy_core.plugins.discovery import PluginCandidate, discover_plugins
from deeploy_core.plugins.host import PluginHost
from deeploy_core.plugins.records import PluginRecord, PluginStatus
from deeploy_core.plugins.selection import ALLOW_LIST_VARIABLE, PluginSelection

__all__ = [
    "ALLOW_LIST_VARIABLE",
    "PluginCandidate",
    "PluginHost",
    "PluginRecord",
    "PluginSelection",
    "PluginStatus",
    "discover_plugins",
]
