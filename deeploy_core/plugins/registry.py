"""The table of extensions by kind and name, built from what plugins registered.

Building it is all-or-nothing per name: when two plugins register the same
name for the same kind, neither gets it (whichever was installed first must not
silently win), and both plugins are reported as failed, naming each other.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from deeploy_core.errors import ExtensionNotFoundError
from deeploy_core.extensions import EXTENSION_TYPES, Extension, ExtensionOrigin, RegisteredExtension
from deeploy_core.plugins.records import PluginRecord


@dataclass(frozen=True)
class Contribution:
    """One ``register(...)`` call made by a plugin."""

    record: PluginRecord
    extension: Extension


def find_conflicts(contributions: list[Contribution]) -> dict[str, str]:
    """Plugin name → reason, for every plugin involved in a duplicate (kind, name)."""
    by_key: dict[tuple[str, str], list[PluginRecord]] = defaultdict(list)
    for contribution in contributions:
        by_key[(contribution.extension.kind, contribution.extension.name)].append(contribution.record)
    reasons: dict[str, str] = {}
    for (kind, name), records in sorted(by_key.items()):
        if len(records) < 2:
            continue
        for record in records:
            others = sorted({other.label for other in records if other is not record})
            if others:
                reason = f"{kind} {name!r} is also registered by plugin {', '.join(others)}"
            else:
                reason = f"registers {kind} {name!r} more than once"
            reasons.setdefault(record.name, reason + "; duplicate names are ambiguous, disable one plugin")
    return reasons


class ExtensionRegistry:
    """Extensions of working plugins, looked up by kind and explicit name only."""

    def __init__(self, contributions: list[Contribution]) -> None:
        self._table: dict[str, dict[str, RegisteredExtension]] = {kind: {} for kind in EXTENSION_TYPES}
        for contribution in contributions:
            record = contribution.record
            origin = ExtensionOrigin(record.name, record.distribution, record.version)
            extension = contribution.extension
            self._table[extension.kind][extension.name] = RegisteredExtension(extension, origin)

    def get(self, kind: str, name: str) -> RegisteredExtension:
        """The extension ``name`` of ``kind``; a clear error lists the available names."""
        table = self._kind_table(kind)
        if name not in table:
            available = ", ".join(sorted(table)) or "none"
            raise ExtensionNotFoundError(f"no {kind} named {name!r} (available: {available})")
        return table[name]

    def all(self, kind: str) -> list[RegisteredExtension]:
        """Every extension of ``kind``, sorted by name."""
        table = self._kind_table(kind)
        return [table[name] for name in sorted(table)]

    def _kind_table(self, kind: str) -> dict[str, RegisteredExtension]:
        if kind not in self._table:
            raise ExtensionNotFoundError(f"unknown extension kind {kind!r} (kinds: {', '.join(self._table)})")
        return self._table[kind]
