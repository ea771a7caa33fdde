"""Core test configuration.

The core's tests never autoload the plugins installed in the environment:
they build isolated hosts (``PluginHost()``) or set ``DEEPLOY_CORE_PLUGINS``
explicitly for command-line runs.

The ``tiny_cnn`` fixture is the example network of the README and the docs
(``examples/make_tiny_cnn.py``), written once per test module.

Tests marked ``build_matrix`` (the whole differential build matrix of
tests/test_build_matrix.py: every network kind × every compiler and level)
run only when ``-m`` names that marker, and so do tests marked
``heavy_model`` (the long profile: the rest of a matrix whose slice the
default run keeps, with the reason the marker gives).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.example_network import write_tiny_cnn


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    expression = config.getoption("markexpr", "") or ""
    here = Path(__file__).parent
    models = here / "models"  # tests/models/conftest.py states its own heavy_model reason
    for item in items:
        path = Path(str(item.path))
        if here not in path.parents:
            continue
        if "build_matrix" not in expression and item.get_closest_marker("build_matrix"):
            item.add_marker(pytest.mark.skip(reason="the whole build matrix: run with -m build_matrix "
                                                    "(or python bench/build_matrix.py)"))
        marker = item.get_closest_marker("heavy_model")
        if "heavy_model" not in expression and marker and models not in path.parents:
            why = marker.kwargs.get("reason", "the long profile")
            item.add_marker(pytest.mark.skip(reason=f"{why}: run with -m heavy_model"))


@pytest.fixture(autouse=True)
def _no_installed_plugins_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "")


@pytest.fixture(scope="module")
def tiny_cnn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example network saved as ``tiny.onnx`` in a folder of its own."""
    return write_tiny_cnn(tmp_path_factory.mktemp("model") / "tiny.onnx")
