"""The MiniMalloc search in pure Python: the reference the native backend must match node for node.

The search (Moffitt, ASPLOS 2023) is a depth-first search over *canonical*
placements only: buffers are placed in non-decreasing offset order, each at the
lowest aligned offset above every already-placed buffer it overlaps in time.
Any valid placement can be pushed down into a canonical one, so nothing is
lost, but the branching factor drops from "every offset" to "which buffer
next".  On top of that:

* dynamic ordering: candidates are tried by their lowest possible offset, ties
  broken by the static preordering rank (:mod:`deeploy_minimalloc.preordering`);
* dominance: a buffer is never placed at or above the top of some other
  unplaced buffer's lowest slot, since that buffer would fit underneath and
  the same layout is reached in a canonical order elsewhere;
* spatial inference: every section keeps a *floor* (nothing unplaced in it can
  go lower) and the *total* of its unplaced sizes; floor + total above the
  capacity proves the branch dead before it is explored.  Floors are raised
  by placed buffers, by the lowest offset any unplaced buffer of the section
  can still take, and by the offset just placed (canonical order makes floors
  monotonic);
* hatless pruning: once a buffer that has no unplaced buffer overlapping it
  ("nothing on top") has failed, no sibling can succeed, because its offset
  is forced whichever order the rest is placed in;
* dynamic decomposition: when the buffers placed so far cut the timeline (no
  unplaced buffer spans a section boundary), both sides are solved as
  independent sub-partitions with freshly computed preorderings;
* round robin over preorderings with a node budget doubled each round, so an
  unlucky heuristic cannot stall the search.

State changes are undone on the way back (trail of old values), never copied.
"""

from __future__ import annotations

import sys
import time
from itertools import accumulate
from operator import add
from typing import Sequence

from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.outcome import SearchOutcome, SearchStatus

_FOUND = int(SearchStatus.FOUND)
_INFEASIBLE = int(SearchStatus.INFEASIBLE)
_BUDGET = int(SearchStatus.BUDGET)
_TIME_LIMIT = int(SearchStatus.TIME_LIMIT)
_UNPLACED = -1
_UNLIMITED = 1 << 62
_NO_MIN = 1 << 62
_DEADLINE_CHECK_MASK = 1023
"""The clock is read every 1024 nodes, like the native backend does."""

_Partition = tuple[list[int], int, int]
_Entry = tuple[int, int, int]
_Envelope = tuple[list[int], list[int], list[int], list[int]]
_NEGATIVE = -(1 << 62)
"""An ordering entry: (lowest possible offset, preorder rank, buffer)."""


class PythonSearch:
    """One decision problem: place every buffer of ``instance`` below ``capacity``."""

    def __init__(self, instance: SearchInstance, capacity: int, heuristics: Sequence[str],
                 node_limit: int | None = None, time_limit: float | None = None) -> None:
        sweep = instance.sweep
        self.count = instance.count
        self.sizes = list(instance.sizes)
        self.alignment = instance.alignment
        self.capacity = capacity
        self.heuristics = tuple(heuristics)
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.section_lower = list(sweep.section_lower)
        self.section_upper = list(sweep.section_upper)
        self.overlaps = [list(found) for found in sweep.overlaps]
        self.sections = [list(section) for section in sweep.sections]
        # Each section's members with the unplaced ones first (``live[s]`` of them); ``slot[b][s - lower(b)]`` is
        # where b sits in section s.  Placing b swaps it behind the live ones; undoing is ``live[s] += 1`` since
        # undo runs in reverse order and the order among live members does not matter.
        self.live = [len(section) for section in self.sections]
        self.slot = [[0] * (upper - lower) for lower, upper in zip(sweep.section_lower, sweep.section_upper)]
        for s, section in enumerate(self.sections):
            for index, b in enumerate(section):
                self.slot[b][s - sweep.section_lower[b]] = index
        self.partitions: list[_Partition] = [(list(p.buffers), p.section_lower, p.section_upper)
                                             for p in sweep.partitions]
        self.cuts = list(sweep.cuts)
        self.offset = [_UNPLACED] * self.count
        self.solution = [_UNPLACED] * self.count
        self.min_offset = [0] * self.count
        self.floor = [0] * len(self.sections)
        self.section_min = [0 if section else _NO_MIN for section in self.sections]
        """Per section, the lowest offset any unplaced member can take (kept exact incrementally)."""
        self.total = [sum(self.sizes[b] for b in section) for section in self.sections]
        widths = [upper - lower for lower, upper in zip(instance.lowers, instance.uppers)]
        self.static_keys: dict[str, list[int]] = {
            "A": [size * width for size, width in zip(self.sizes, widths)],
            "C": [upper - lower for lower, upper in zip(self.section_lower, self.section_upper)],
            "L": list(instance.lowers),
            "O": [len(found) for found in self.overlaps],
            "U": list(instance.uppers),
            "W": widths,
            "Z": list(self.sizes),
        }
        self.heuristic = self.heuristics[0]
        self.nodes_remaining = _UNLIMITED
        self.nodes = 0
        self.backtracks = 0
        self.deadline: float | None = None

    # -- driver ------------------------------------------------------------------------------------------

    def run(self) -> SearchOutcome:
        """Search with each heuristic in turn (budgets doubling), or once without budget for a single one."""
        if self.count == 0:
            return SearchOutcome(SearchStatus.FOUND)
        if self.time_limit is not None:
            self.deadline = time.monotonic() + self.time_limit
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, 8 * self.count + 1000))
        try:
            status, heuristic = self._round_robin()
        finally:
            sys.setrecursionlimit(old_limit)
        offsets = tuple(self.solution) if status == _FOUND else ()
        return SearchOutcome(SearchStatus(status), offsets, self.nodes, self.backtracks, heuristic)

    def _round_robin(self) -> tuple[int, str | None]:
        if len(self.heuristics) == 1:
            self.nodes_remaining = self.node_limit if self.node_limit is not None else _UNLIMITED
            status = self._solve_partitions(self.heuristics[0])
            return status, (self.heuristics[0] if status == _FOUND else None)
        limit = self.count
        while True:
            limit *= 2
            last_round = self.node_limit is not None and limit >= self.node_limit
            if self.node_limit is not None:
                limit = min(limit, self.node_limit)
            for heuristic in self.heuristics:
                self.nodes_remaining = limit
                status = self._solve_partitions(heuristic)
                if status == _FOUND:
                    return status, heuristic
                if status != _BUDGET:
                    return status, None
            if last_round:
                return _BUDGET, None

    def _solve_partitions(self, heuristic: str) -> int:
        self.heuristic = heuristic
        for buffers, lower, upper in self.partitions:
            status = self._sub_solve(buffers, lower, upper)
            if status != _FOUND:
                return status
        return _FOUND

    # -- search ------------------------------------------------------------------------------------------

    def _sub_solve(self, buffers: list[int], lower: int, upper: int) -> int:
        """Rank the partition's buffers with the current heuristic, then search it from an empty floor."""
        keys: list[Sequence[int] | dict[int, int]] = [
            self._largest_section_totals(buffers) if letter == "T" else self.static_keys[letter]
            for letter in self.heuristic]
        preorder = sorted(buffers, key=lambda b: (*(-key[b] for key in keys), b))
        min_offset = self.min_offset
        ordering = sorted((min_offset[b], rank, b) for rank, b in enumerate(preorder))
        return self._search((buffers, lower, upper), ordering, 0, 0)

    def _largest_section_totals(self, buffers: list[int]) -> dict[int, int]:
        """Per buffer, the largest total still unplaced in any of its sections (key ``T``, changes as we go)."""
        total = self.total
        return {b: max(total[s] for s in range(self.section_lower[b], self.section_upper[b])) for b in buffers}

    def _search(self, partition: _Partition, previous: list[_Entry], lowest: int, lowest_rank: int) -> int:
        if self.nodes_remaining <= 0:
            return _BUDGET
        self.nodes_remaining -= 1
        self.nodes += 1
        if not self.nodes & _DEADLINE_CHECK_MASK and self.deadline is not None and time.monotonic() > self.deadline:
            return _TIME_LIMIT
        offset = self.offset
        min_offset = self.min_offset
        unchanged: list[_Entry] = []
        moved: list[_Entry] = []
        for entry in previous:
            b = entry[2]
            if offset[b] != _UNPLACED:
                continue
            if min_offset[b] == entry[0]:
                unchanged.append(entry)
            else:
                moved.append((min_offset[b], entry[1], b))
        if not unchanged and not moved:
            return _FOUND
        unchanged.extend(moved)
        ordering = unchanged
        if moved:
            ordering.sort()
        sizes = self.sizes
        min_height = min(entry[0] + sizes[entry[2]] for entry in ordering)
        envelope: _Envelope | None = None
        for at, rank, b in ordering:
            if at < lowest or (at == lowest and rank < lowest_rank):
                continue
            if at >= min_height:
                break  # dominated, and so is every later entry (sorted by offset)
            if envelope is None:
                envelope = self._envelope(partition)
            if self._fits_before_propagation(partition, envelope, at, b):
                status, hatless = self._place(partition, ordering, at, rank, b)
                if status != _INFEASIBLE:
                    return status
            else:
                hatless = all(offset[other] != _UNPLACED for other in self.overlaps[b])
            if hatless:
                break
        self.backtracks += 1
        return _INFEASIBLE

    def _envelope(self, partition: _Partition) -> _Envelope:
        """Prefix and suffix maxima of totals and fills (floor + total) over the partition, for this node.

        Placements undo themselves, so the node's state is the same for every
        candidate: one O(sections) pass here makes each candidate's check
        outside its own sections O(1).
        """
        _, lower, upper = partition
        total = self.total[lower:upper]
        fill = list(map(add, self.floor[lower:upper], total))
        return (list(accumulate(total, max, initial=_NEGATIVE)),
                list(accumulate(reversed(total), max, initial=_NEGATIVE))[::-1],
                list(accumulate(fill, max, initial=_NEGATIVE)),
                list(accumulate(reversed(fill), max, initial=_NEGATIVE))[::-1])

    def _fits_before_propagation(self, partition: _Partition, envelope: _Envelope, at: int, b: int) -> bool:
        """Every section keeps ``max(floor, at) + total <= capacity`` with b taken off its own sections.

        Floors only rise and totals only fall in b's sections, so this is
        necessary for the check after propagation, and the sections it passes
        that propagation leaves alone need no second look.
        """
        lower = partition[1]
        first, end = self.section_lower[b], self.section_upper[b]
        total_prefix, total_suffix, fill_prefix, fill_suffix = envelope
        before, after = first - lower, end - lower
        capacity = self.capacity
        room = capacity - at
        if total_prefix[before] > room or total_suffix[after] > room:
            return False
        if fill_prefix[before] > capacity or fill_suffix[after] > capacity:
            return False
        size = self.sizes[b]
        total = self.total[first:end]
        return max(total) - size <= room and max(map(add, self.floor[first:end], total)) - size <= capacity

    def _place(self, partition: _Partition, ordering: list[_Entry], at: int, rank: int, b: int) -> tuple[int, bool]:
        """Place ``b`` at ``at``, propagate, check, recurse, undo; whether ``b`` had nothing unplaced on top."""
        offset, min_offset, floor, total = self.offset, self.min_offset, self.floor, self.total
        section_min = self.section_min
        section_lower, section_upper = self.section_lower, self.section_upper
        size = self.sizes[b]
        height = at + size
        raised_to = -(-height // self.alignment) * self.alignment
        first, end = section_lower[b], section_upper[b]
        offset[b] = at
        # 1. Every unplaced buffer overlapping b now starts at or above its top.
        raised: list[tuple[int, int]] = []
        hatless = True
        for other in self.overlaps[b]:
            if offset[other] != _UNPLACED:
                continue
            hatless = False
            previous = min_offset[other]
            if previous < height:
                raised.append((other, previous))
                min_offset[other] = raised_to
        self._retire(b)
        # 2+3. Section minima and floors.  A minimum can only rise where b left (its own sections) or where a
        # raised buffer held it; a floor is b's top in b's sections and at least the minimum wherever a raised
        # buffer lives.  Raised buffers all overlap b: left of b's sections they cover one zone [left, first),
        # right of them [end, right), and whether a raised buffer held a section's minimum there only depends on
        # the smallest old offset among those covering it (a running minimum over their ends).
        left_old: dict[int, int] = {}
        right_old: dict[int, int] = {}
        cover = [0] * (end - first + 1)
        left, right = first, end
        for other, previous in raised:
            lo, hi = section_lower[other], section_upper[other]
            if lo < first:
                if previous < left_old.get(lo, _NO_MIN):
                    left_old[lo] = previous
                if lo < left:
                    left = lo
            if hi > end:
                if previous < right_old.get(hi - 1, _NO_MIN):
                    right_old[hi - 1] = previous
                if hi > right:
                    right = hi
            cover[(lo if lo > first else first) - first] += 1
            cover[(hi if hi < end else end) - first] -= 1
        min_trail: list[tuple[int, int]] = []
        floor_trail: list[tuple[int, int]] = []
        live, sections, lookup = self.live, self.sections, min_offset.__getitem__
        for zone, olds in ((range(left, first), left_old), (range(right - 1, end - 1, -1), right_old)):
            smallest = _NO_MIN
            for s in zone:
                old = olds.get(s, _NO_MIN)
                if old < smallest:
                    smallest = old
                lowest = section_min[s]
                if smallest == lowest:
                    # A raised buffer held the minimum: rescan the live members.
                    lowest = min(map(lookup, sections[s][:live[s]]))
                    if lowest != section_min[s]:
                        min_trail.append((s, section_min[s]))
                        section_min[s] = lowest
                if floor[s] < lowest:
                    floor_trail.append((s, floor[s]))
                    floor[s] = lowest
        covering = 0
        for s in range(first, end):
            covering += cover[s - first]
            lowest = min(map(lookup, sections[s][:live[s]])) if live[s] else _NO_MIN
            if lowest != section_min[s]:
                min_trail.append((s, section_min[s]))
                section_min[s] = lowest
            floor_trail.append((s, floor[s]))
            floor[s] = lowest if covering > 0 and lowest > height else height
            total[s] -= size
        # 4. Spatial inference: max(floor, at) + total <= capacity.  Only the sections on the floor trail changed
        #    since the check before propagation.
        status = _INFEASIBLE
        capacity = self.capacity
        for s, _ in floor_trail:
            if (floor[s] if floor[s] > at else at) + total[s] > capacity:
                break
        else:
            status = self._decompose(partition, ordering, at, rank, b)
        # Undo, newest first.
        for s in range(first, end):
            total[s] += size
        for s, value in reversed(floor_trail):
            floor[s] = value
        for s, value in reversed(min_trail):
            section_min[s] = value
        self._revive(b)
        for other, value in reversed(raised):
            min_offset[other] = value
        offset[b] = _UNPLACED
        return status, hatless

    def _retire(self, b: int) -> None:
        """Move b behind the live members of each of its sections."""
        live, sections, slot, section_lower = self.live, self.sections, self.slot, self.section_lower
        first = section_lower[b]
        own = slot[b]
        for s in range(first, self.section_upper[b]):
            here = own[s - first]
            last = live[s] - 1
            live[s] = last
            members = sections[s]
            other = members[last]
            members[here] = other
            members[last] = b
            slot[other][s - section_lower[other]] = here
            own[s - first] = last

    def _revive(self, b: int) -> None:
        live = self.live
        for s in range(self.section_lower[b], self.section_upper[b]):
            live[s] += 1

    def _decompose(self, partition: _Partition, ordering: list[_Entry], at: int, rank: int, b: int) -> int:
        """Continue in this partition, or split it where ``b`` was the last unplaced buffer across a boundary."""
        self.solution[b] = at
        cuts = self.cuts
        first, last = self.section_lower[b], self.section_upper[b] - 1
        cutpoints: list[int] = []
        for s in range(first, last):
            cuts[s] -= 1
            if not cuts[s]:
                cutpoints.append(s + 1)
        if not cutpoints:
            status = self._search(partition, ordering, at, rank)
        else:
            buffers, lower, upper = partition
            bounds = [lower, *cutpoints, upper]
            offset, section_lower, section_upper = self.offset, self.section_lower, self.section_upper
            status = _FOUND
            for sub_lower, sub_upper in zip(bounds, bounds[1:]):
                inside = [o for o in buffers if offset[o] == _UNPLACED
                          and section_lower[o] < sub_upper and sub_lower < section_upper[o]]
                if not inside:
                    continue
                status = self._sub_solve(inside, sub_lower, sub_upper)
                if status != _FOUND:
                    break
        for s in range(first, last):
            cuts[s] += 1
        return status
