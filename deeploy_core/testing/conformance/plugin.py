"""The contract every plugin meets, whatever it extends."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from deeploy_core.extensions import EXTENSION_TYPES
from deeploy_core.plugins import PluginHost, PluginRecord, PluginStatus


class PluginConformance:
    """Subclass with ``plugin = <module or object>`` to check a plugin loads and registers cleanly.

    Set ``plugin_name`` to the entry-point name the plugin is published under.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "plugin-under-test"

    @pytest.fixture
    def conformance_host(self) -> PluginHost:
        """An isolated host holding the built-ins and the plugin under test."""
        if self.plugin is None:
            pytest.fail(f"{type(self).__name__} must set the class attribute 'plugin'")
        host = PluginHost()
        host.add_plugin(self.plugin, name=self.plugin_name)
        return host

    @pytest.fixture
    def plugin_record(self, conformance_host: PluginHost) -> PluginRecord:
        """The host's record of the plugin under test."""
        return conformance_host.record(self.plugin_name)

    def test_plugin_loads(self, plugin_record: PluginRecord) -> None:
        assert plugin_record.status is PluginStatus.OK, plugin_record.error

    def test_plugin_registers_extensions(self, plugin_record: PluginRecord) -> None:
        assert plugin_record.kinds, "the plugin implements no registry hook or registers nothing"

    def test_extensions_are_described(self, conformance_host: PluginHost, plugin_record: PluginRecord) -> None:
        for kind, names in plugin_record.extensions.items():
            for name in names:
                extension = conformance_host.extension(kind, name)
                assert extension.description.strip(), f"{kind} {name!r} has no description for listings"

    def test_extension_kinds_are_known(self, plugin_record: PluginRecord) -> None:
        assert set(plugin_record.kinds) <= set(EXTENSION_TYPES)

    def test_listing_is_json(self, plugin_record: PluginRecord) -> None:
        listed = json.loads(json.dumps(plugin_record.to_json()))
        assert listed["name"] == self.plugin_name and listed["status"] == "ok"
