"""The Cortex-M plugin passes the core's conformance suites, as an outside plugin would.

The platform suite compiles every ONNX node test case of every op the
platforms claim and judges it through the core's node-case batches, which for
a board platform are cross-built for its core and run on its emulated board:
the Cortex-M4 (``mps2-an386``), the Cortex-M7 (``mps2-an500``), the
Cortex-M33 (``mps2-an505``) and the Cortex-M55 (``mps3-an547``, where GCC
vectorises generic C for Helium).  Every op a platform claims is run on that
platform's own core.
"""

from __future__ import annotations

from deeploy_core.plugins import PluginHost
from deeploy_core.testing import PlatformConformance, PluginConformance
from deeploy_cortex_m import plugin as cortex_m_plugin
from deeploy_cortex_m.names import CORTEX_M4, CORTEX_M7, CORTEX_M33, CORTEX_M55
from deeploy_generic_c import plugin as generic_c_plugin


def _host_with_generic_c() -> PluginHost:
    """generic-c is the Cortex-M platforms' base (a declared dependency), so it is installed alongside."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c")
    host.add_plugin(cortex_m_plugin, name="cortex-m")
    return host


class TestCortexMPlugin(PluginConformance):
    plugin = cortex_m_plugin
    plugin_name = "cortex-m"


def _platform_suite(core: str) -> type[PlatformConformance]:
    """The platform suite for ``core``, with generic-c installed beside the plugin."""

    class Suite(PlatformConformance):
        plugin = cortex_m_plugin
        plugin_name = "cortex-m"
        platform = core

        @classmethod
        def make_host(cls) -> PluginHost:
            return _host_with_generic_c()

    return Suite


TestCortexM4Platform = _platform_suite(CORTEX_M4)
TestCortexM7Platform = _platform_suite(CORTEX_M7)
TestCortexM33Platform = _platform_suite(CORTEX_M33)
TestCortexM55Platform = _platform_suite(CORTEX_M55)
