"""Core test configuration.

The core's tests never autoload the plugins installed in the environment:
they build isolated hosts (``PluginHost()``) or set ``DEEPLOY_CORE_PLUGINS``
explicitly for command-line runs.
"""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_installed_plugins_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEEPLOY_CORE_PLUGINS", "")
