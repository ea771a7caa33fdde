"""Memory maps per level: every block with its offset, size and lifetime (for checks, reports and plots)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MapBlock:
    """``size`` bytes at ``offset`` during the time steps ``[start, end)``."""

    name: str
    offset: int
    size: int
    start: int
    end: int


@dataclass
class LevelMap:
    """All blocks placed in one memory level."""

    level: str
    capacity: int | None
    blocks: list[MapBlock] = field(default_factory=list)

    @property
    def peak(self) -> int:
        return max((b.offset + b.size for b in self.blocks), default=0)
