"""The plugin against the core's plugin and allocator contracts, once per backend and once minimising under a capacity."""

from __future__ import annotations

import pytest

from deeploy_core.testing import AllocatorConformance, PluginConformance
from deeploy_minimalloc import native_available
from deeploy_minimalloc import plugin as minimalloc_plugin


class TestMiniMallocPlugin(PluginConformance):
    plugin = minimalloc_plugin
    plugin_name = "minimalloc"


@pytest.mark.skipif(not native_available(), reason="the C search core was not built in this install")
class TestMiniMallocNative(AllocatorConformance):
    plugin = minimalloc_plugin
    plugin_name = "minimalloc"
    allocator_name = "minimalloc"
    options = {"backend": "native"}


class TestMiniMallocPython(AllocatorConformance):
    """A smaller minimisation budget keeps the pure-Python run of the random instances to seconds."""

    plugin = minimalloc_plugin
    plugin_name = "minimalloc"
    allocator_name = "minimalloc"
    options = {"backend": "python", "minimise_budget": 20_000}


class TestMiniMallocMinimisingUnderACapacity(AllocatorConformance):
    """``mode="minimise"`` must honour a given capacity as a ceiling (and still refuse one below the bound)."""

    plugin = minimalloc_plugin
    plugin_name = "minimalloc"
    allocator_name = "minimalloc"
    options = {"mode": "minimise"}
