"""A plugin host of the two bundled platforms (generic-c, pulp-cluster) and the plugins a test adds, nothing installed.

Tests of operator plugins need both platforms beside the plugin under test, named as their distributions name them,
whatever else the environment has installed; several test modules build such hosts, from here.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.plugins import PluginHost
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin


def host_with(*plugins: Any) -> PluginHost:
    """generic-c and pulp-cluster, then ``plugins`` as ``operators-0``, ``operators-1``, ... in that order."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    for index, plugin in enumerate(plugins):
        host.add_plugin(plugin, name=f"operators-{index}")
    return host
