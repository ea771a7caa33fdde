"""The core's tiler, memory-level and tiled-allocation conformance suites on the generic C platform's tiled mode."""

from __future__ import annotations

from deeploy_core.builtin.plugin import DOUBLE_BUFFERING, HOST_TWO_LEVEL, SINGLE_BUFFERING
from deeploy_core.testing import MemoryLevelConformance, TiledAllocationConformance, TilerConformance
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_minimalloc import plugin as minimalloc_plugin
from deeploy_tetris import plugin as tetris_plugin

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


ALL_ALLOCATORS = (*PLATFORM, (minimalloc_plugin, "minimalloc"), (tetris_plugin, "tetris"))
"""The platform with every bundled allocator plugin beside the core's first fit."""


class TestSingleBufferingAllocation(TiledAllocationConformance):
    plugins = ALL_ALLOCATORS
    tiler = SINGLE_BUFFERING


class TestDoubleBufferingAllocation(TiledAllocationConformance):
    plugins = ALL_ALLOCATORS
    tiler = DOUBLE_BUFFERING
