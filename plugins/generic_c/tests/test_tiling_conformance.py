"""The core's tiler and memory-level conformance suites on the generic C platform's tiled mode."""

from __future__ import annotations

from deeploy_core.builtin.plugin import DOUBLE_BUFFERING, HOST_TWO_LEVEL, SINGLE_BUFFERING
from deeploy_core.testing import MemoryLevelConformance, TilerConformance
from deeploy_generic_c import plugin as generic_c_plugin

PLATFORM = ((generic_c_plugin, "generic-c"),)


class TestSingleBufferingTiler(TilerConformance):
    plugins = PLATFORM
    tiler = SINGLE_BUFFERING


class TestDoubleBufferingTiler(TilerConformance):
    plugins = PLATFORM
    tiler = DOUBLE_BUFFERING


class TestTwoLevelMemory(MemoryLevelConformance):
    plugins = PLATFORM
    memory_level = HOST_TWO_LEVEL
