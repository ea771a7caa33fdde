"""The core's built-in allocator, so that deployment works without allocator plugins.

Blocks are placed largest first (ties: earliest start, then id) at the lowest
aligned offset that does not collide with an already placed block alive at the
same time.  It is fast and deterministic, not optimal: the MiniMalloc and Tetris
plugins exist for tight memories.
"""

from __future__ import annotations

from deeploy_core.allocation.problem import AllocationProblem, AllocationSolution


class FirstFitAllocator:
    """Greedy largest-first, lowest-offset placement (:meth:`AllocationProblem.first_fit`) within the capacity."""

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        """Place every block; infeasible when the greedy peak exceeds the capacity."""
        solution = problem.first_fit()
        peak = solution.peak(problem)
        if problem.capacity is not None and peak > problem.capacity:
            return AllocationSolution(offsets=dict(solution.offsets), feasible=False,
                                      reason=f"first-fit needs {peak} bytes, capacity is {problem.capacity}")
        return solution
