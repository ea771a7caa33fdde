"""Core test configuration.

The core's tests never autoload the plugins installed in the environment:
they build isolated hosts (``PluginHost()``) or set ``DEEPLOY_CORE_PLUGINS``
explicitly for command-line runs.

Tests marked ``build_matrix`` (the whole differential build matrix of
tests/test_build_matrix.py: every network kind × every compiler and level)
run only when ``-m`` names that marker, as ``heavy_model`` tests do in
tests/models; the default run keeps the matrix's slice.
"""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "build_matrix" in (config.getoption("markexpr", "") or ""):
        return
    for item in items:
        if item.get_closest_marker("build_matrix"):
            item.add_marker(pytest.mark.skip(reason="the whole build matrix: run with -m build_matrix "
                                                    "(or python bench/build_matrix.py)"))


@pytest.fixture(autouse=True)
def _no_installed_plugins_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "")
