"""Finding installed plugins through their entry points.

Only metadata is read here; nothing is imported, so that a broken plugin can be
listed (and disabled) without being loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata
from typing import Any, Callable

from deeploy_core.hookspecs import ENTRY_POINT_GROUP


@dataclass(frozen=True)
class PluginCandidate:
    """An installed plugin that has not been imported yet."""

    name: str
    distribution: str
    version: str
    source: str
    load: Callable[[], Any]


def discover_plugins(group: str = ENTRY_POINT_GROUP) -> list[PluginCandidate]:
    """Every entry point in ``group``, sorted by name then distribution (never by install order)."""
    candidates = []
    for entry_point in metadata.entry_points(group=group):
        distribution = getattr(entry_point, "dist", None)
        candidates.append(
            PluginCandidate(
                name=entry_point.name,
                distribution=distribution.metadata["Name"] if distribution is not None else "unknown",
                version=distribution.version if distribution is not None else "",
                source=entry_point.value,
                load=entry_point.load,
            )
        )
    return sorted(candidates, key=lambda candidate: (candidate.name, candidate.distribution, candidate.source))
