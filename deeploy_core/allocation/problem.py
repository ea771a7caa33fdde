"""The static allocation problem shared by the core, the tiler and allocator plugins.

A block is a buffer that must sit at one fixed offset for the half-open time
interval ``[lower, upper)``.  Two blocks whose intervals overlap must not
overlap in memory.  Keeping the problem this plain lets allocator plugins be
tested on instance files (``id,lower,upper,size``) without a network at hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class AllocationBlock:
    """One buffer: alive during ``[lower, upper)``, ``size`` bytes long."""

    id: str
    lower: int
    upper: int
    size: int

    def __post_init__(self) -> None:
        if self.lower >= self.upper:
            raise ValueError(f"block {self.id!r}: empty lifetime [{self.lower}, {self.upper})")
        if self.size < 0:
            raise ValueError(f"block {self.id!r}: negative size {self.size}")

    def overlaps_in_time(self, other: AllocationBlock) -> bool:
        """Whether both blocks are alive at some common time step."""
        return self.lower < other.upper and other.lower < self.upper


@dataclass(frozen=True)
class AllocationProblem:
    """Blocks to place below ``capacity`` bytes (``None``: unbounded, minimise the peak)."""

    blocks: tuple[AllocationBlock, ...]
    capacity: int | None = None
    alignment: int = 1

    def __post_init__(self) -> None:
        ids = [block.id for block in self.blocks]
        if len(set(ids)) != len(ids):
            raise ValueError("allocation problem has duplicate block ids")
        if self.alignment < 1:
            raise ValueError(f"alignment must be >= 1, got {self.alignment}")

    def lower_bound(self) -> int:
        """The largest total size alive at one time step: no solution can do better."""
        events: dict[int, int] = {}
        for block in self.blocks:
            events[block.lower] = events.get(block.lower, 0) + block.size
            events[block.upper] = events.get(block.upper, 0) - block.size
        alive = best = 0
        for time in sorted(events):
            alive += events[time]
            best = max(best, alive)
        return best

    def first_fit(self) -> AllocationSolution:
        """Blocks largest first (ties: earliest start, then id), each at the lowest aligned offset free while it lives.

        Fast and deterministic, not optimal, and blind to the capacity: the
        core's first-fit allocator judges the result against it, and an exact
        allocator starts its search from it (a warm start, and the answer when
        it already meets :meth:`lower_bound`).
        """
        placed: list[tuple[AllocationBlock, int]] = []
        offsets: dict[str, int] = {}
        for block in sorted(self.blocks, key=lambda block: (-block.size, block.lower, block.id)):
            busy = sorted((offset, offset + other.size) for other, offset in placed if other.overlaps_in_time(block))
            candidate = 0
            for start, end in busy:
                if candidate + block.size <= start:
                    break
                candidate = max(candidate, -(-end // self.alignment) * self.alignment)
            offsets[block.id] = candidate
            placed.append((block, candidate))
        return AllocationSolution(offsets=offsets)

    def stacked(self, order: Sequence[str]) -> dict[str, int]:
        """Offsets of the blocks placed in ``order``, each directly above the earlier ones alive at the same time.

        The Tetris placement rule, as a method of the problem so that an allocator plugin needs no helper
        function from the core (the plugin API stays one name smaller); blocks ``order`` leaves out follow it in
        id order.
        """
        from deeploy_core.allocation.model_contribution import stack_in_order

        sizes = {block.id: block.size for block in self.blocks}
        lifetimes = {block.id: (block.lower, block.upper) for block in self.blocks}
        return stack_in_order(order, sizes, lifetimes, self.alignment)


@dataclass(frozen=True)
class AllocationSolution:
    """Offsets per block id; ``feasible`` is False when no placement fits the capacity."""

    offsets: dict[str, int] = field(default_factory=dict)
    feasible: bool = True
    reason: str = ""

    def peak(self, problem: AllocationProblem) -> int:
        """The highest address used by any block (the memory the solution needs)."""
        sizes = {block.id: block.size for block in problem.blocks}
        return max((offset + sizes[block_id] for block_id, offset in self.offsets.items()), default=0)
