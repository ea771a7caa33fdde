"""What the core needs of a static allocator: ``solve`` a problem into a solution."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from deeploy_core.allocation.problem import AllocationProblem, AllocationSolution


@runtime_checkable
class Allocator(Protocol):
    """An allocator extension's product, as the compilation holds it.

    Only the shape of the call is promised here: what comes back is plugin
    output and is checked by :func:`deeploy_core.allocation.checked_solve.solve_checked`
    before anything uses it.
    """

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        """One offset per block of ``problem`` (or an infeasible solution with a reason)."""
        ...
