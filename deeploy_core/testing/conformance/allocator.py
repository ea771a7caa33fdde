"""The contract of allocator extensions: valid offsets, honest infeasibility, determinism."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.plugins import PluginHost


def _chain_problem(capacity: int | None = None) -> AllocationProblem:
    """Blocks that pairwise overlap in time like a layer-by-layer network (lower bound 96)."""
    return AllocationProblem(
        blocks=(
            AllocationBlock("input", 0, 2, 32),
            AllocationBlock("conv_out", 1, 3, 64),
            AllocationBlock("relu_out", 2, 4, 32),
            AllocationBlock("pool_out", 3, 5, 16),
            AllocationBlock("output", 4, 6, 8),
        ),
        capacity=capacity,
    )


def _interleaved_problem() -> AllocationProblem:
    """Twenty blocks with mixed lifetimes and sizes: enough to trip simple mistakes."""
    blocks = tuple(
        AllocationBlock(f"b{index:02d}", index % 7, index % 7 + 1 + (index * 5) % 4, 8 + (index * 37) % 56)
        for index in range(20)
    )
    return AllocationProblem(blocks=blocks)


class AllocatorConformance:
    """Subclass with ``plugin`` and ``allocator_name`` to check an allocator extension.

    ``options`` are passed to the allocator's factory.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "allocator-under-test"
    allocator_name: ClassVar[str] = ""
    options: ClassVar[dict[str, Any]] = {}

    @pytest.fixture
    def allocator(self) -> Any:
        """A fresh allocator made by the host, as ``--allocator NAME`` would make it."""
        host = PluginHost()
        if self.plugin is not None:
            host.add_plugin(self.plugin, name=self.plugin_name)
        return host.create("allocator", self.allocator_name, **self.options)

    def _solve(self, allocator: Any, problem: AllocationProblem) -> AllocationSolution:
        solution = allocator.solve(problem)
        assert isinstance(solution, AllocationSolution), f"solve() returned {type(solution).__name__}"
        return solution

    def test_unbounded_problem_is_solved_validly(self, allocator: Any) -> None:
        problem = _interleaved_problem()
        solution = self._solve(allocator, problem)
        assert solution.feasible, solution.reason
        assert find_allocation_errors(problem, solution) == []
        assert solution.peak(problem) >= problem.lower_bound()

    def test_fits_a_capacity_that_holds_every_block_side_by_side(self, allocator: Any) -> None:
        blocks = _chain_problem().blocks
        problem = AllocationProblem(blocks=blocks, capacity=sum(block.size for block in blocks))
        solution = self._solve(allocator, problem)
        assert solution.feasible, solution.reason
        assert find_allocation_errors(problem, solution) == []

    def test_reports_infeasible_below_the_lower_bound(self, allocator: Any) -> None:
        problem = _chain_problem(capacity=_chain_problem().lower_bound() - 1)
        solution = self._solve(allocator, problem)
        assert not solution.feasible
        assert solution.reason.strip(), "an infeasible solution must say why"

    def test_alignment_is_respected(self, allocator: Any) -> None:
        base = _interleaved_problem()
        problem = AllocationProblem(blocks=base.blocks, alignment=16)
        solution = self._solve(allocator, problem)
        assert find_allocation_errors(problem, solution) == []

    def test_empty_problem(self, allocator: Any) -> None:
        solution = self._solve(allocator, AllocationProblem(blocks=(), capacity=0))
        assert solution.feasible and solution.offsets == {}

    def test_is_deterministic(self, allocator: Any) -> None:
        problem = _interleaved_problem()
        assert self._solve(allocator, problem).offsets == self._solve(allocator, problem).offsets
