"""Shared fixtures of the PULP cluster plugin's tests, and the opt-in for their long matrices.

Tests marked ``heavy_model`` (here: the L3 matrix over every peer network,
test_l3.py) run only when ``-m`` names that marker, as in tests/models: the
default suite keeps a representative subset of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "heavy_model" in (config.getoption("markexpr", "") or ""):
        return
    here = Path(__file__).parent
    for item in items:
        marker = item.get_closest_marker("heavy_model")
        if here in Path(str(item.path)).parents and marker:
            why = marker.kwargs.get("reason", "the long matrix")
            item.add_marker(pytest.mark.skip(reason=f"{why}: run with -m heavy_model"))

from deeploy_core.plugins import PluginHost
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin


@pytest.fixture(scope="session")
def cluster_host() -> PluginHost:
    """A host with the built-ins, the generic C plugin (whose kernels the cluster reuses) and this plugin."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


@pytest.fixture(scope="session")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled C runtime, built once per test session."""
    return tmp_path_factory.mktemp("cluster-runtime-cache")
