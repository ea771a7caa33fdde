"""What the host knows about each plugin: where it came from and whether it works."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class PluginStatus(str, Enum):
    """``ok``: in use; ``failed``: broken, contributes nothing; ``disabled``: switched off by the user;
    ``conflict``: in use, but some name it registered was registered before (by another plugin or by
    itself), so that one registration is ignored while its other extensions work."""

    OK = "ok"
    FAILED = "failed"
    DISABLED = "disabled"
    CONFLICT = "conflict"


@dataclass
class PluginRecord:
    """One plugin as listed by ``deeploy-core plugins``.

    ``error`` holds the one-line reason for ``failed``, ``disabled`` and
    ``conflict``.  ``extensions`` maps an extension kind to the names the
    plugin registered and that are in use (an ignored duplicate is left out).
    ``load_seconds`` is the wall time (monotonic clock) of importing the
    plugin and running its registry hooks; 0 for a plugin that was not loaded.
    ``notes`` are one-line remarks that leave the status alone: every
    registration is in use, but the user should know how it interacts with
    others (an operator variant shadowed by another plugin's, an override of a
    platform's own op; see :mod:`deeploy_core.plugins.operator_conflicts`).
    """

    name: str
    distribution: str
    version: str = ""
    source: str = ""
    builtin: bool = False
    status: PluginStatus = PluginStatus.OK
    error: str = ""
    hooks: tuple[str, ...] = ()
    extensions: dict[str, list[str]] = field(default_factory=dict)
    load_seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The extension kinds this plugin registered at least one extension of."""
        return tuple(kind for kind, names in self.extensions.items() if names)

    def fail(self, reason: str) -> None:
        """Mark the plugin broken; the first reason is the one that is kept."""
        if self.status is not PluginStatus.FAILED:
            self.status = PluginStatus.FAILED
            self.error = reason

    def lose_registration(self, kind: str, name: str, reason: str) -> None:
        """One registration of ``kind`` ``name`` is ignored: mark ``conflict`` and add ``reason`` to the error."""
        names = self.extensions.get(kind, [])
        if name in names:
            names.remove(name)  # the first occurrence: a name the plugin registered twice stays listed once
        if not names:
            self.extensions.pop(kind, None)
        if self.status is PluginStatus.OK:
            self.status, self.error = PluginStatus.CONFLICT, reason
        elif self.status is PluginStatus.CONFLICT and reason not in self.error.split("; also "):
            self.error = f"{self.error}; also {reason}"

    def clear_conflict(self) -> None:
        """Back to ``ok``, without notes, before duplicates are resolved again (the set of plugins changed)."""
        if self.status is PluginStatus.CONFLICT:
            self.status, self.error = PluginStatus.OK, ""
        self.notes = []

    def note(self, text: str) -> None:
        """Add a one-line note (once), keeping the status."""
        if text not in self.notes:
            self.notes.append(text)

    @property
    def label(self) -> str:
        """``name (distribution version)``: how error messages name a plugin."""
        detail = f"{self.distribution} {self.version}".strip()
        return f"{self.name!r} ({detail})"

    def to_json(self) -> dict[str, Any]:
        """A plain-data view for ``plugins --json``.

        ``load_seconds`` is rounded to milliseconds; it is the one field that
        differs between two runs, so compare listings without it.
        """
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "source": self.source,
            "builtin": self.builtin,
            "status": self.status.value,
            "error": self.error or None,
            "hooks": list(self.hooks),
            "kinds": list(self.kinds),
            "extensions": {kind: sorted(names) for kind, names in self.extensions.items() if names},
            "notes": list(self.notes),
            "load_seconds": round(self.load_seconds, 3),
        }
