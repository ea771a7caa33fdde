"""The core's built-in allocator, so that deployment works without allocator plugins.

Blocks are placed largest first (ties: earliest start, then id) at the lowest
aligned offset that does not collide with an already placed block alive at the
same time.  It is fast and deterministic, not optimal: the MiniMalloc and Tetris
plugins exist for tight memories.
"""

from __future__ import annotations

from deeploy_core.allocation.problem import AllocationBlock, AllocationProblem, AllocationSolution


def _align_up(value: int, alignment: int) -> int:
    return -(-value // alignment) * alignment


class FirstFitAllocator:
    """Greedy largest-first, lowest-offset placement."""

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        """Place every block; infeasible when the greedy peak exceeds the capacity."""
        order = sorted(problem.blocks, key=lambda block: (-block.size, block.lower, block.id))
        placed: list[tuple[AllocationBlock, int]] = []
        offsets: dict[str, int] = {}
        for block in order:
            busy = sorted(
                (offset, offset + other.size) for other, offset in placed if other.overlaps_in_time(block)
            )
            candidate = 0
            for start, end in busy:
                if candidate + block.size <= start:
                    break
                candidate = max(candidate, _align_up(end, problem.alignment))
            offsets[block.id] = candidate
            placed.append((block, candidate))
        solution = AllocationSolution(offsets=offsets)
        peak = solution.peak(problem)
        if problem.capacity is not None and peak > problem.capacity:
            return AllocationSolution(
                offsets=offsets,
                feasible=False,
                reason=f"first-fit needs {peak} bytes, capacity is {problem.capacity}",
            )
        return solution
