"""Fixtures of the docs tests: the example network, its data, and a host with the generic C platform."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.network import GeneratedNetwork
from deeploy_core.plugins import PluginHost
from deeploy_core.validate.data import load_npz_by_position
from tests.docs.workspace import GOLDEN, MODEL, write_data


@pytest.fixture(scope="session")
def docs_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding ``model.onnx``, ``in.npz`` and ``golden.npz`` (made once per worker)."""
    folder = tmp_path_factory.mktemp("docs-data")
    write_data(folder)
    return folder


@pytest.fixture(scope="session")
def docs_inputs(docs_data: Path) -> dict[str, np.ndarray]:
    with np.load(docs_data / "in.npz", allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


@pytest.fixture(scope="session")
def docs_golden(docs_data: Path) -> list[np.ndarray]:
    return load_npz_by_position(docs_data / GOLDEN)


@pytest.fixture(scope="session")
def generic_c_plugin() -> object:
    return pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin is not installed")


@pytest.fixture
def generic_c_host(generic_c_plugin: object) -> PluginHost:
    """A fresh host with the generic C platform only; a test adds the example plugin it checks."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return host


@pytest.fixture(scope="session")
def example_network(docs_data: Path, generic_c_plugin: object) -> GeneratedNetwork:
    """The example network compiled for generic C, as ``deeploy-core compile model.onnx`` does."""
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    _, generated = compile_model(docs_data / MODEL, CompileOptions(platform="generic-c"), host)
    return generated
