"""Shared fixtures of the generic C plugin's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost
from deeploy_generic_c import plugin as generic_c_plugin


@pytest.fixture(scope="session")
def generic_c_host() -> PluginHost:
    """A host with only the built-ins and this plugin (whatever else is installed)."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return host


@pytest.fixture(scope="session")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled C runtime, built once per test session."""
    return tmp_path_factory.mktemp("runtime-cache")
