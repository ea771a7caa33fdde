"""Memory levels and the hierarchy that connects them.

A level is a named memory of fixed size; neighbours are the levels a transfer
engine can move data between directly (L3 ↔ L2 ↔ L1).  The hierarchy knows
which level is the default home of tensors and can tell the path a tile takes
from its home to the level where the kernel reads it.  Hierarchies are data: a
YAML file or a plugin's memory-level registration describes one.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


from deeploy_core.errors import DeeployError

BUFFERINGS = ("single", "double")
"""How many staging buffers a tile coming from a level outside the home level gets in the home level: one, two."""


@dataclass(frozen=True)
class MemoryLevel:
    """One memory: ``size`` bytes (``None``: unbounded), reachable from ``neighbourNames``.

    ``buffering`` matters for a level beyond the home level (L3 when tensors
    live in L2): tensors that do not fit the home level live there, and a
    tile of one is moved into a staging buffer of the home level on its way to
    the compute level.  ``double`` gives each streamed tensor two staging
    buffers, so the next tile's transfer from this level is in flight while
    the current tile computes; ``single`` one.
    """

    name: str
    neighbourNames: tuple[str, ...]
    size: int | None
    buffering: str = "single"


@dataclass(frozen=True)
class MemoryHierarchy:
    """Levels by name, the default level of tensors, and the level kernels compute from."""

    levels: tuple[MemoryLevel, ...]
    default_level: str
    compute_level: str
    io_level: str | None = None
    alignment: int = 16
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        names = [level.name for level in self.levels]
        if len(set(names)) != len(names):
            raise DeeployError(f"memory hierarchy: duplicate level names in {names}")
        for level in self.levels:
            for neighbour in level.neighbourNames:
                if neighbour not in names:
                    raise DeeployError(f"memory level {level.name!r}: unknown neighbour {neighbour!r}")
            if level.size is not None and level.size <= 0:
                raise DeeployError(f"memory level {level.name!r}: size must be positive, got {level.size}")
            if level.buffering not in BUFFERINGS:
                raise DeeployError(f"memory level {level.name!r}: buffering must be single or double, got "
                                   f"{level.buffering!r}")
        for role in ("default_level", "compute_level", "io_level"):
            value = getattr(self, role)
            if value is not None and value not in names:
                raise DeeployError(f"memory hierarchy: {role} {value!r} is not a level ({', '.join(names)})")
        self.path(self.default_level, self.compute_level)

    def level(self, name: str) -> MemoryLevel:
        """The level called ``name``."""
        for level in self.levels:
            if level.name == name:
                return level
        raise DeeployError(f"memory hierarchy has no level {name!r} ({', '.join(l.name for l in self.levels)})")

    def path(self, source: str, target: str) -> list[str]:
        """The shortest chain of neighbouring levels from ``source`` to ``target`` (both included)."""
        previous: dict[str, str | None] = {source: None}
        queue = deque([source])
        while queue:
            current = queue.popleft()
            if current == target:
                chain = [current]
                before = previous[current]
                while before is not None:
                    chain.append(before)
                    before = previous[before]
                return chain[::-1]
            for neighbour in sorted(self.level(current).neighbourNames):
                if neighbour not in previous:
                    previous[neighbour] = current
                    queue.append(neighbour)
        raise DeeployError(f"memory hierarchy: no path from {source!r} to {target!r}")

    def with_sizes(self, sizes: dict[str, int]) -> MemoryHierarchy:
        """A copy with some level sizes overridden (``--l1 64000``)."""
        unknown = sorted(set(sizes) - {level.name for level in self.levels})
        if unknown:
            levels = ", ".join(level.name for level in self.levels)
            raise DeeployError(f"--{unknown[0].lower()}: the memory hierarchy has no level {unknown[0]} to resize (its "
                               f"levels: {levels}); drop the option or choose a hierarchy with that level")
        return replace(self, levels=tuple(replace(l, size=sizes.get(l.name, l.size)) for l in self.levels))

    def with_buffering(self, buffering: dict[str, str]) -> MemoryHierarchy:
        """A copy with the staging buffering of some levels overridden (``l3_buffering=double``)."""
        unknown = sorted(set(buffering) - {level.name for level in self.levels})
        if unknown:
            raise DeeployError(f"{unknown[0].lower()}_buffering: the memory hierarchy has no level {unknown[0]} (its "
                               f"levels: {', '.join(level.name for level in self.levels)})")
        return replace(self, levels=tuple(replace(l, buffering=buffering.get(l.name, l.buffering))
                                          for l in self.levels))

    def outer_levels(self) -> list[str]:
        """Levels beyond the home level, nearest first: the home level's neighbours (and theirs) away from the
        compute level, where tensors may live when the home level cannot hold them all."""
        towards_compute = set(self.path(self.default_level, self.compute_level))
        found: list[str] = []
        frontier = [self.default_level]
        while frontier:
            nearer = []
            for name in frontier:
                for neighbour in sorted(self.level(name).neighbourNames):
                    if neighbour not in towards_compute and neighbour not in found and neighbour != self.default_level:
                        found.append(neighbour)
                        nearer.append(neighbour)
            frontier = nearer
        return found

    def to_json(self) -> dict[str, Any]:
        return {
            "levels": [{"name": l.name, "neighbours": list(l.neighbourNames), "size": l.size, "buffering": l.buffering}
                       for l in self.levels],
            "default": self.default_level,
            "compute": self.compute_level,
            "io": self.io_level,
            "alignment": self.alignment,
        }


def hierarchy_from_dict(data: dict[str, Any], origin: str = "memory hierarchy") -> MemoryHierarchy:
    """Build a hierarchy from its YAML/JSON form (see :meth:`MemoryHierarchy.to_json`)."""
    try:
        levels = tuple(
            MemoryLevel(str(item["name"]), tuple(str(n) for n in item.get("neighbours", ())),
                        None if item.get("size") is None else int(item["size"]), str(item.get("buffering", "single")))
            for item in data["levels"]
        )
        return MemoryHierarchy(levels, str(data["default"]), str(data["compute"]),
                               None if data.get("io") is None else str(data["io"]), int(data.get("alignment", 16)))
    except (KeyError, TypeError, ValueError) as error:
        raise DeeployError(f"{origin}: malformed ({type(error).__name__}: {error})") from None


def load_hierarchy(path: Path) -> MemoryHierarchy:
    """Read a hierarchy from a YAML file (``yaml.safe_load``: no code execution)."""
    import yaml  # only here: the built-in hierarchies are Python data, and most commands never read a file

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise DeeployError(f"memory hierarchy {path}: cannot read it ({error})") from None
    if not isinstance(data, dict):
        raise DeeployError(f"memory hierarchy {path}: expected a mapping with 'levels', 'default' and 'compute'")
    return hierarchy_from_dict(data, str(path))
