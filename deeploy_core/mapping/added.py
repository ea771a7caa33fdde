"""Mappers that operator plugins add to a platform's table, and where they go in the order of alternatives.

The parser takes the first alternative that accepts a node, so the position of
a plugin's mapper decides whose code runs.  Keeping the two positions apart as
data (rather than one merged table) makes the precedence rule of
:class:`~deeploy_core.extensions.OperatorExtension` one line that every user
of the table applies the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from deeploy_core.mapping.binding import NodeMapper


@dataclass(frozen=True)
class PluginMappers:
    """Plugin mappers by op key: ``first`` are tried before the platform's own, ``last`` after them.

    ``first`` holds the mappers of extensions that declare ``override=True``;
    ``last`` every other one.  Within each, mappers keep registration order.
    """

    first: Mapping[str, tuple[NodeMapper, ...]] = field(default_factory=dict)
    last: Mapping[str, tuple[NodeMapper, ...]] = field(default_factory=dict)

    @classmethod
    def appended(cls, extra: Mapping[str, Sequence[NodeMapper]] | None) -> PluginMappers:
        """Plain ``{op key: mappers}`` (the form platforms used before) as mappers tried after the platform's."""
        return cls(last={key: tuple(mappers) for key, mappers in (extra or {}).items()})

    def around(self, key: str, platform_mappers: Sequence[NodeMapper]) -> list[NodeMapper]:
        """Every alternative for op ``key`` in the order they are tried."""
        return [*self.first.get(key, ()), *platform_mappers, *self.last.get(key, ())]

    def keys(self) -> set[str]:
        """Every op key some plugin adds a mapper for."""
        return set(self.first) | set(self.last)
