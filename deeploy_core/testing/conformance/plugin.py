"""The contract every plugin meets, whatever it extends."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest

from deeploy_core.extensions import EXTENSION_TYPES
from deeploy_core.plugins import PluginHost, PluginRecord, PluginStatus
from deeploy_core.testing.loading import require_loaded


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
        """The host's record of the plugin under test, whatever its status."""
        return conformance_host.record(self.plugin_name)

    @pytest.fixture
    def loaded_record(self, plugin_record: PluginRecord) -> PluginRecord:
        """The record, or an error with the host's reason when the plugin did not load.

        Checks that need a working plugin use this, so that a broken plugin
        makes them report why it broke rather than a misleading symptom such
        as "registers nothing".
        """
        return require_loaded(plugin_record)

    def test_plugin_loads(self, plugin_record: PluginRecord) -> None:
        assert plugin_record.status is PluginStatus.OK, f"plugin {self.plugin_name!r} failed: {plugin_record.error}"

    def test_plugin_registers_extensions(self, loaded_record: PluginRecord) -> None:
        assert loaded_record.kinds, "the plugin implements no registry hook or registers nothing"

    def test_extensions_are_described(self, conformance_host: PluginHost, loaded_record: PluginRecord) -> None:
        for kind, names in loaded_record.extensions.items():
            for name in names:
                extension = conformance_host.extension(kind, name)
                assert extension.description.strip(), f"{kind} {name!r} has no description for listings"

    def test_extension_kinds_are_known(self, loaded_record: PluginRecord) -> None:
        assert set(loaded_record.kinds) <= set(EXTENSION_TYPES)

    def test_listing_is_json(self, loaded_record: PluginRecord) -> None:
        listed = json.loads(json.dumps(loaded_record.to_json()))
        assert listed["name"] == self.plugin_name and listed["status"] == "ok"
