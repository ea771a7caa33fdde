"""Which installed plugins the user wants loaded.

Three switches, applied in this order: ``--no-plugins`` (none), the
``DEEPLOY_CORE_PLUGINS`` allow-list (comma-separated; set but empty means none),
and ``--disable-plugin NAME`` (repeatable).  Names match a plugin's entry-point
name or its distribution name, ignoring case and ``-``/``_``/``.`` differences.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

ALLOW_LIST_VARIABLE = "DEEPLOY_CORE_PLUGINS"


def normalise_plugin_name(name: str) -> str:
    """Canonical form for matching plugin and distribution names (PEP 503 style)."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


@dataclass(frozen=True)
class PluginSelection:
    """The user's choice of installed plugins; ``allow_list=None`` means all of them."""

    no_plugins: bool = False
    allow_list: frozenset[str] | None = None
    disabled: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_options(
        cls,
        environ: Mapping[str, str],
        no_plugins: bool = False,
        disabled: tuple[str, ...] | list[str] = (),
    ) -> PluginSelection:
        """Build the selection from the environment and the command-line switches."""
        raw = environ.get(ALLOW_LIST_VARIABLE)
        allow_list = None
        if raw is not None:
            allow_list = frozenset(normalise_plugin_name(part) for part in raw.split(",") if part.strip())
        return cls(
            no_plugins=no_plugins,
            allow_list=allow_list,
            disabled=frozenset(normalise_plugin_name(name) for name in disabled),
        )

    def is_disabled(self, name: str, distribution: str) -> bool:
        """Whether ``--disable-plugin`` names this plugin."""
        return bool({normalise_plugin_name(name), normalise_plugin_name(distribution)} & self.disabled)

    def why_excluded(self, name: str, distribution: str, builtin: bool = False) -> str | None:
        """The reason this plugin is not loaded, or ``None`` when it should be loaded.

        Built-in plugins are part of the core: only ``--disable-plugin`` turns them off.
        """
        keys = {normalise_plugin_name(name), normalise_plugin_name(distribution)}
        if keys & self.disabled:
            return "disabled by --disable-plugin"
        if builtin:
            return None
        if self.no_plugins:
            return "disabled by --no-plugins"
        if self.allow_list is not None and not keys & self.allow_list:
            return f"not listed in {ALLOW_LIST_VARIABLE}"
        return None
