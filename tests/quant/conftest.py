"""Fixtures of the tests with the real quantisers, their skips when the ``quant`` extra is absent, heavy networks' opt-in.

Every test here needs some of the ``quant`` extra's packages (``make quant``):
each test module names the ones it imports with ``tests.quant.extra.needs``, looked up
without importing them (TensorFlow takes seconds to import), and skips with
that reason when one is missing.  Tests marked ``heavy_model`` (the MLPerf
Tiny networks: a minute to convert, compile and run twenty inputs each) run
only when ``-m`` names that marker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    if "heavy_model" in (config.getoption("markexpr", "") or ""):
        return
    for item in items:
        if here in Path(str(item.path)).parents and item.get_closest_marker("heavy_model"):
            item.add_marker(pytest.mark.skip(reason="takes minutes: run with -m heavy_model"))


@pytest.fixture(scope="session")
def quant_host() -> PluginHost:
    """The built-ins plus the generic C and PULP cluster platforms."""
    from deeploy_generic_c import plugin as generic_c_plugin
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


@pytest.fixture(scope="session")
def quant_runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The platforms' compiled C runtimes, built once per test session."""
    return tmp_path_factory.mktemp("quant-runtime-cache")
