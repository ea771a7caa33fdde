"""State shared by the commands of one ``deeploy-core`` invocation."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Callable

from deeploy_core.plugins import PluginHost, PluginSelection
from deeploy_core.plugins.selection import normalise_plugin_name
from deeploy_core.plugins.timing import slow_plugin_threshold


@dataclass
class CliSession:
    """Builds the plugin host on first use, from the switches of this invocation."""

    environ: dict[str, str]
    no_plugins: bool = False
    disabled: tuple[str, ...] = ()
    trace: Callable[[str], None] | None = None
    _host: PluginHost | None = field(default=None, init=False)

    @property
    def host(self) -> PluginHost:
        """The plugin host, with every allowed installed plugin loaded."""
        if self._host is None:
            selection = PluginSelection.from_options(self.environ, self.no_plugins, self.disabled)
            self._host = PluginHost.discover(selection, trace=self.trace,
                                             slow_seconds=slow_plugin_threshold(self.environ))
            self._warn_unknown_disabled(self._host)
        return self._host

    def _warn_unknown_disabled(self, host: PluginHost) -> None:
        known = set()
        for record in host.plugins():
            known.update({normalise_plugin_name(record.name), normalise_plugin_name(record.distribution)})
        for name in self.disabled:
            if normalise_plugin_name(name) not in known:
                sys.stderr.write(f"warning: --disable-plugin {name}: no plugin of that name is installed\n")
