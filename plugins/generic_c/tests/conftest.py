"""Shared fixtures of the generic C plugin's tests.

Tests marked ``heavy_model`` (per-layer judgements that compile, build and run
every layer of a network alone, for each variant beyond the first) run only
when ``-m`` names that marker, as in tests/models.
"""

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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "heavy_model" in (config.getoption("markexpr", "") or ""):
        return
    here = Path(__file__).parent
    for item in items:
        marker = item.get_closest_marker("heavy_model")
        if here in Path(str(item.path)).parents and marker:
            why = marker.kwargs.get("reason", "compiles every layer alone")
            item.add_marker(pytest.mark.skip(reason=f"{why}: run with -m heavy_model"))
