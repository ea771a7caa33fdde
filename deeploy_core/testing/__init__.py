"""Test support for plugin authors: pytest fixtures and conformance suites.

Installing deeploy-core registers :mod:`deeploy_core.testing.pytest_plugin`
with pytest, so the fixtures are available in any test suite.  Subclass a
conformance class to check that a plugin meets the host's contract::

    from deeploy_core.testing import AllocatorConformance
    import my_plugin

    class TestMyAllocator(AllocatorConformance):
        plugin = my_plugin
        allocator_name = "my-allocator"
"""

from typing import Any

_EXPORTS = {
    "AllocatorConformance": "deeploy_core.testing.conformance.allocator",
    "CodeTransformationConformance": "deeploy_core.testing.conformance.code_transformation",
    "MemoryLevelConformance": "deeploy_core.testing.conformance.tiling",
    "MPS2_LINKER_SCRIPT": "deeploy_core.testing.emulated_targets",
    "MPS2_STARTUP": "deeploy_core.testing.emulated_targets",
    "OperatorConformance": "deeploy_core.testing.conformance.operator",
    "PlatformConformance": "deeploy_core.testing.conformance.platform",
    "PluginConformance": "deeploy_core.testing.conformance.plugin",
    "TiledAllocationConformance": "deeploy_core.testing.conformance.tiling",
    "TilerConformance": "deeploy_core.testing.conformance.tiling",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import suites on first use: pytest loads this package at start-up in every project."""
    if name not in _EXPORTS:
        raise AttributeError(name)
    import importlib

    return getattr(importlib.import_module(_EXPORTS[name]), name)
