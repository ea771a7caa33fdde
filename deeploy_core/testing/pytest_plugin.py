"""pytest fixtures for testing deeploy_core plugins (registered through the ``pytest11`` entry point).

None of them loads the plugins installed in the environment unless the test
asks for it with ``installed_plugin_host``: a test must not pass or fail
because of what else happens to be installed.
"""

from __future__ import annotations

from typing import Callable

import pytest

from deeploy_core.plugins import PluginHost, PluginRecord, PluginSelection
from deeploy_core.testing.loading import PluginLoadFailed, require_loaded

__all__ = ["PluginLoadFailed"]

REPORT_CHECK_OPTION = "deeploy_core_check_reports"
"""The ini option that validates every report.json a session writes (:mod:`deeploy_core.testing.report_schema`; it
needs jsonschema, so that module is imported only when the option is on)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini(REPORT_CHECK_OPTION, type="bool", default=False,
                  help="Validate every report.json the session writes against deeploy-core's report schema "
                       "(needs jsonschema).")


def pytest_configure(config: pytest.Config) -> None:
    # The conformance suites mark their long matrices; a plugin's own suite may skip them by default.
    config.addinivalue_line("markers", "heavy_model: a long case of a conformance matrix (run with -m heavy_model)")
    if config.getini(REPORT_CHECK_OPTION):
        from deeploy_core.testing.report_schema import register

        register(config, REPORT_CHECK_OPTION)


@pytest.fixture
def plugin_host() -> PluginHost:
    """A host with the core's built-in plugins only."""
    return PluginHost()


@pytest.fixture
def register_plugin(plugin_host: PluginHost) -> Callable[..., PluginRecord]:
    """Register a plugin object or module into ``plugin_host``.

    ``register_plugin(plugin, name="mine")`` returns the plugin's record and,
    unless ``expect_failure=True``, fails the test with the host's reason if
    the plugin did not load or its registry hooks failed.
    """

    def register(
        plugin: object,
        name: str | None = None,
        distribution: str = "local",
        version: str = "",
        expect_failure: bool = False,
    ) -> PluginRecord:
        plugin_name = name or str(getattr(plugin, "__name__", type(plugin).__name__))
        plugin_host.add_plugin(plugin, name=plugin_name, distribution=distribution, version=version)
        record = plugin_host.record(plugin_name)
        return record if expect_failure else require_loaded(record)

    return register


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise ``node_case`` of :class:`PlatformConformance` subclasses with the platform's ops."""
    if "node_case" not in metafunc.fixturenames or metafunc.cls is None:
        return
    from deeploy_core.supported_ops import supported_operators
    from deeploy_core.testing.conformance.platform import PlatformConformance
    from deeploy_core.testing.node_cases import node_cases

    if not issubclass(metafunc.cls, PlatformConformance):
        return
    host = metafunc.cls.make_host()
    ops = {row["op"] for row in supported_operators(host, metafunc.cls.platform)}
    cases = node_cases(ops)
    metafunc.parametrize("node_case", cases, ids=[case.name for case in cases])


@pytest.fixture
def installed_plugin_host() -> PluginHost:
    """A host with every plugin installed in the environment (what the CLI sees without switches)."""
    return PluginHost.discover(PluginSelection())
