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

from deeploy_core.testing.conformance.allocator import AllocatorConformance
from deeploy_core.testing.conformance.plugin import PluginConformance

__all__ = ["AllocatorConformance", "PluginConformance"]
