"""The contract of allocator extensions: valid offsets, honest infeasibility, determinism."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.allocation.checked_solve import malformed_solution
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.loading import load_plugin_under_test


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


def random_problem(seed: int, count: int = 60) -> AllocationProblem:
    """Seeded blocks with network-like lifetimes (mostly short, a few long) and skewed sizes."""
    import random

    rng = random.Random(seed)
    blocks = []
    for index in range(count):
        lower = rng.randrange(0, 40)
        length = rng.choice((1, 1, 2, 2, 3, 5, 20))
        size = rng.choice((1, 3, 16, 64, 100, 256, 1024, 4000))
        blocks.append(AllocationBlock(f"r{index:03d}", lower, lower + length, size))
    return AllocationProblem(tuple(blocks), alignment=rng.choice((1, 4, 16)))


def _same_lifetime() -> AllocationProblem:
    """Everything alive at once: the only valid layouts pack blocks side by side."""
    blocks = tuple(AllocationBlock(f"s{index}", 0, 1, 8 * (index + 1)) for index in range(12))
    return AllocationProblem(blocks, capacity=sum(b.size for b in blocks))


def _staircase() -> AllocationProblem:
    """Each block overlaps only its neighbours: the lower bound is two blocks wide."""
    blocks = tuple(AllocationBlock(f"t{index}", index, index + 2, 32) for index in range(30))
    return AllocationProblem(blocks)


def _zero_sized() -> AllocationProblem:
    return AllocationProblem((AllocationBlock("empty", 0, 3, 0), AllocationBlock("full", 1, 2, 10)), capacity=10)


def _below_lower_bound() -> AllocationProblem:
    blocks = (AllocationBlock("a", 0, 2, 40), AllocationBlock("b", 1, 3, 40))
    return AllocationProblem(blocks, capacity=79)


def _exact_fit() -> AllocationProblem:
    """Capacity equal to the lower bound where a simple interval layout reaches it."""
    blocks = (AllocationBlock("a", 0, 2, 40), AllocationBlock("b", 1, 3, 24), AllocationBlock("c", 2, 4, 40))
    return AllocationProblem(blocks, capacity=64)


def _huge_and_tiny() -> AllocationProblem:
    blocks = (AllocationBlock("huge", 0, 10, 1 << 20),) + tuple(
        AllocationBlock(f"tiny{index}", index, index + 1, 1) for index in range(10))
    return AllocationProblem(blocks, alignment=64)


ADVERSARIAL = {
    "same-lifetime": _same_lifetime,
    "staircase": _staircase,
    "zero-sized": _zero_sized,
    "below-lower-bound": _below_lower_bound,
    "exact-fit": _exact_fit,
    "huge-and-tiny": _huge_and_tiny,
}
"""Instances named by the mistake they catch; capacity below the lower bound must be reported infeasible."""

TIGHT_INSTANCES = frozenset({"same-lifetime", "exact-fit"})
"""Instances whose capacity equals the lower bound: only a gap-free packing fits."""


class AllocatorConformance:
    """Subclass with ``plugin`` and ``allocator_name`` to check an allocator extension.

    ``options`` are passed to the allocator's factory.
    """

    plugin: ClassVar[Any] = None
    plugin_name: ClassVar[str] = "allocator-under-test"
    allocator_name: ClassVar[str] = ""
    options: ClassVar[dict[str, Any]] = {}
    tight_instances_must_fit: ClassVar[bool] = True
    """Whether the allocator promises to reach the lower bound on the small :data:`TIGHT_INSTANCES`.

    Exact and complete allocators (MiniMalloc, CP-SAT based ones) keep this on;
    a pure heuristic that may miss a gap-free packing sets it to ``False`` and
    must then still refuse those capacities with a reason rather than overflow.
    """

    @pytest.fixture
    def allocator(self) -> Any:
        """A fresh allocator made by the host, as ``--allocator NAME`` would make it."""
        host = PluginHost()
        if self.plugin is not None:
            load_plugin_under_test(host, self.plugin, self.plugin_name)
        return host.create("allocator", self.allocator_name, **self.options)

    def _solve(self, allocator: Any, problem: AllocationProblem) -> AllocationSolution:
        solution = allocator.solve(problem)
        reason = malformed_solution(solution)
        assert reason is None, reason
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

    # -- random and adversarial instances ----------------------------------------------------------------

    @pytest.mark.parametrize("seed", range(12))
    def test_random_instances_are_valid_and_reproducible(self, allocator: Any, seed: int) -> None:
        problem = random_problem(seed)
        first = self._solve(allocator, problem)
        assert first.feasible, first.reason
        assert find_allocation_errors(problem, first) == []
        assert set(first.offsets) == {block.id for block in problem.blocks}
        assert self._solve(allocator, problem).offsets == first.offsets

    @pytest.mark.parametrize("seed", range(6))
    def test_a_capacity_equal_to_its_own_peak_is_feasible(self, allocator: Any, seed: int) -> None:
        """Tight capacity: the allocator must accept the capacity its own unbounded answer needs."""
        problem = random_problem(seed)
        peak = self._solve(allocator, problem).peak(problem)
        bounded = AllocationProblem(problem.blocks, capacity=peak, alignment=problem.alignment)
        solution = self._solve(allocator, bounded)
        assert solution.feasible, solution.reason
        assert find_allocation_errors(bounded, solution) == []

    @pytest.mark.parametrize("name", sorted(ADVERSARIAL))
    def test_adversarial_instances(self, allocator: Any, name: str) -> None:
        problem = ADVERSARIAL[name]()
        solution = self._solve(allocator, problem)
        if problem.capacity is not None and problem.capacity < problem.lower_bound():
            assert not solution.feasible and solution.reason.strip()
            return
        if name in TIGHT_INSTANCES and not self.tight_instances_must_fit and not solution.feasible:
            assert solution.reason.strip(), f"{name}: an infeasible answer must say why"
            return
        assert solution.feasible, f"{name}: {solution.reason}"
        assert find_allocation_errors(problem, solution) == []

    def test_a_block_larger_than_the_capacity_is_infeasible(self, allocator: Any) -> None:
        problem = AllocationProblem((AllocationBlock("big", 0, 1, 65), AllocationBlock("small", 0, 1, 1)), capacity=64)
        solution = self._solve(allocator, problem)
        assert not solution.feasible and solution.reason.strip()

