"""Fixtures of the exporter tests, their skip when torch is absent, and the opt-in for heavy networks.

Every test here needs the ``models`` extra (``make models``); without torch
the whole folder skips with one stated reason instead of failing to import.
Tests marked ``heavy_model`` (networks with millions of weights, whose C
file alone takes gcc minutes, or an arena that takes minutes to tile) run
only when ``-m`` names that marker, so CI and ``make test`` leave them out
while the default set still builds the same architectures in a narrower
form.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost

TORCH_MISSING = "torch is not installed: tests/models needs the 'models' extra (make models)"


def _torch_missing() -> bool:
    """Looked up without importing it (torch takes seconds to import, and only the tests themselves need it)."""
    try:
        return importlib.util.find_spec("torch") is None
    except (ImportError, ValueError):  # a broken or blocked installation counts as absent
        return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    mine = [item for item in items if here in Path(str(item.path)).parents]
    if _torch_missing():
        for item in mine:
            item.add_marker(pytest.mark.skip(reason=TORCH_MISSING))
    if "heavy_model" not in (config.getoption("markexpr", "") or ""):
        for item in mine:
            if item.get_closest_marker("heavy_model"):
                item.add_marker(pytest.mark.skip(reason="takes minutes: run with -m heavy_model"))


@pytest.fixture(scope="session")
def models_host() -> PluginHost:
    """The built-ins plus the generic C and PULP cluster platforms (whatever else is installed)."""
    from deeploy_generic_c import plugin as generic_c_plugin
    from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


@pytest.fixture(scope="session")
def models_runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The platforms' compiled C runtimes, built once per test session."""
    return tmp_path_factory.mktemp("models-runtime-cache")
