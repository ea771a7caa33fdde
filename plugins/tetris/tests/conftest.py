"""A host holding the generic C platform (to compile real networks) and this plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost
from deeploy_tetris import plugin as tetris_plugin


@pytest.fixture(scope="session")
def tetris_host() -> PluginHost:
    generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C platform plugin is not installed")
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c", distribution="deeploy-generic-c")
    host.add_plugin(tetris_plugin, name="tetris", distribution="deeploy-tetris")
    return host


@pytest.fixture(scope="session")
def tetris_runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tetris-runtime-cache")
