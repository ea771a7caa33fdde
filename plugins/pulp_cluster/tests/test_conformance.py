"""The cluster plugin passes the core's conformance suites, as an outside plugin would.

The platform suite compiles every float32 ONNX node test case of every op the
platform claims for the cluster: tiled into L1, shared among 8 cores, built
against the emulator, run and compared.
"""

from __future__ import annotations

from deeploy_core.builtin.plugin import DOUBLE_BUFFERING, SINGLE_BUFFERING
from deeploy_core.plugins import PluginHost
from deeploy_core.testing import (MemoryLevelConformance, PlatformConformance, PluginConformance,
                                  TiledAllocationConformance, TilerConformance)
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_minimalloc import plugin as minimalloc_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from deeploy_pulp_cluster.plugin import MEMORY_LEVEL_NAME, PLATFORM_NAME
from deeploy_tetris import plugin as tetris_plugin

PLUGINS = ((generic_c_plugin, "generic-c"), (pulp_cluster_plugin, "pulp-cluster"))


class TestPulpClusterPlugin(PluginConformance):
    plugin = pulp_cluster_plugin
    plugin_name = "pulp-cluster"


class TestPulpClusterPlatform(PlatformConformance):
    plugin = pulp_cluster_plugin
    plugin_name = "pulp-cluster"
    platform = PLATFORM_NAME

    @classmethod
    def make_host(cls) -> PluginHost:
        """The cluster reuses the generic C plugin's kernels, so that plugin is installed alongside (a dependency)."""
        host = PluginHost()
        host.add_plugin(generic_c_plugin, name="generic-c")
        host.add_plugin(pulp_cluster_plugin, name="pulp-cluster")
        return host


class TestClusterSingleBuffering(TilerConformance):
    plugins = PLUGINS
    platform = PLATFORM_NAME
    memory_level = MEMORY_LEVEL_NAME
    tiler = SINGLE_BUFFERING
    level_sizes = (65536, 32768, 16384)


class TestClusterDoubleBuffering(TilerConformance):
    plugins = PLUGINS
    platform = PLATFORM_NAME
    memory_level = MEMORY_LEVEL_NAME
    tiler = DOUBLE_BUFFERING
    level_sizes = (65536, 32768, 16384)


class TestClusterMemoryLevel(MemoryLevelConformance):
    plugins = PLUGINS
    platform = PLATFORM_NAME
    memory_level = MEMORY_LEVEL_NAME


ALL_ALLOCATORS = (*PLUGINS, (minimalloc_plugin, "minimalloc"), (tetris_plugin, "tetris"))
"""The cluster with every bundled allocator plugin beside the core's first fit."""


class TestClusterSingleBufferingAllocation(TiledAllocationConformance):
    plugins = ALL_ALLOCATORS
    platform = PLATFORM_NAME
    memory_level = MEMORY_LEVEL_NAME
    tiler = SINGLE_BUFFERING


class TestClusterDoubleBufferingAllocation(TiledAllocationConformance):
    plugins = ALL_ALLOCATORS
    platform = PLATFORM_NAME
    memory_level = MEMORY_LEVEL_NAME
    tiler = DOUBLE_BUFFERING
