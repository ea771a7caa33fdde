"""The generic C plugin passes the core's conformance suites, as an outside plugin would."""

from __future__ import annotations

from deeploy_core.testing import PlatformConformance, PluginConformance
from deeploy_generic_c import plugin as generic_c_plugin


class TestGenericCPlugin(PluginConformance):
    plugin = generic_c_plugin
    plugin_name = "generic-c"


class TestGenericCPlatform(PlatformConformance):
    plugin = generic_c_plugin
    plugin_name = "generic-c"
    platform = "generic-c"
