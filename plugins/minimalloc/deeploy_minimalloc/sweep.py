"""The timeline sweep: sections, partitions, pairwise overlaps and cuts.

The search never reasons about raw time steps.  Sweeping the lifetimes once
turns them into *sections* (snapshots of the set of live buffers, taken each
time the sweep reaches a moment where some buffer dies), so that "which buffers
compete for the same addresses" becomes a list of small sets.  Every buffer
then spans a contiguous range of section indices, which lets the search keep
per-section floors and remaining sizes for its spatial inference.

The same sweep cuts the timeline into *partitions*: maximal groups of buffers
connected through overlapping lifetimes.  Two partitions share no section and
no overlap, so they are solved one after the other instead of as one product
search.  The *cut* between two adjacent sections counts the buffers alive in
both; when the search has placed all of them the cut drops to zero and the
remaining buffers on either side become independent too (dynamic
decomposition).

Lifetimes are half-open: a buffer dying at ``t`` and one born at ``t`` never
share a section, so deaths are swept before births at equal times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

_DEATH = 0
_BIRTH = 1


@dataclass(frozen=True)
class Partition:
    """Buffers (indices) connected through overlapping lifetimes, and the sections they span ``[lower, upper)``."""

    buffers: tuple[int, ...]
    section_lower: int
    section_upper: int


@dataclass(frozen=True)
class SweepResult:
    """Everything the search needs to know about time, with time itself swept away.

    ``section_lower[b]``/``section_upper[b]``: buffer ``b`` lives in sections
    ``[section_lower[b], section_upper[b])``.  ``overlaps[b]``: the buffers
    alive together with ``b`` at some step, ascending.  ``cuts[s]``: how many
    buffers live in both section ``s`` and ``s + 1``.
    """

    sections: tuple[tuple[int, ...], ...]
    section_lower: tuple[int, ...]
    section_upper: tuple[int, ...]
    overlaps: tuple[tuple[int, ...], ...]
    partitions: tuple[Partition, ...]
    cuts: tuple[int, ...]


def sweep(lowers: Sequence[int], uppers: Sequence[int]) -> SweepResult:
    """Sweep half-open lifetimes ``[lowers[b], uppers[b])`` (each non-empty) from left to right."""
    count = len(lowers)
    events = sorted([(lowers[b], _BIRTH, b) for b in range(count)] + [(uppers[b], _DEATH, b) for b in range(count)])
    sections: list[tuple[int, ...]] = []
    section_lower = [0] * count
    section_upper = [0] * count
    overlaps: list[set[int]] = [set() for _ in range(count)]
    partitions: list[Partition] = []
    members: list[int] = []
    partition_start = 0
    alive: set[int] = set()
    last_snapshot: int | None = None
    for time, kind, buffer in events:
        if last_snapshot is None:
            last_snapshot = time
        if kind == _DEATH:
            # A death after time has advanced closes the current cross section.
            if last_snapshot < time:
                last_snapshot = time
                sections.append(tuple(sorted(alive)))
            alive.discard(buffer)
            section_upper[buffer] = len(sections)
            if not alive:
                partitions.append(Partition(tuple(members), partition_start, len(sections)))
                members = []
                partition_start = len(sections)
        else:
            for other in alive:
                overlaps[other].add(buffer)
                overlaps[buffer].add(other)
            members.append(buffer)
            alive.add(buffer)
            section_lower[buffer] = len(sections)
    cuts = [0] * max(len(sections) - 1, 0)
    for buffer in range(count):
        for section in range(section_lower[buffer], section_upper[buffer] - 1):
            cuts[section] += 1
    return SweepResult(
        sections=tuple(sections),
        section_lower=tuple(section_lower),
        section_upper=tuple(section_upper),
        overlaps=tuple(tuple(sorted(found)) for found in overlaps),
        partitions=tuple(partitions),
        cuts=tuple(cuts),
    )
