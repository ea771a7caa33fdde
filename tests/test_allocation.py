"""The allocation problem, the independent verifier and the built-in allocator."""

from __future__ import annotations

import pytest

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.builtin import plugin as builtin_plugin
from deeploy_core.testing import AllocatorConformance


class TestFirstFitConformance(AllocatorConformance):
    plugin = None  # the built-in is always there
    allocator_name = builtin_plugin.DEFAULT_ALLOCATOR


def test_lower_bound_is_the_peak_of_live_sizes() -> None:
    problem = AllocationProblem(blocks=(AllocationBlock("a", 0, 2, 10), AllocationBlock("b", 1, 3, 5), AllocationBlock("c", 2, 4, 7)))
    assert problem.lower_bound() == 15


def test_verifier_finds_every_kind_of_error() -> None:
    problem = AllocationProblem(
        blocks=(AllocationBlock("a", 0, 2, 10), AllocationBlock("b", 1, 3, 10), AllocationBlock("c", 0, 1, 4)),
        capacity=15,
        alignment=4,
    )
    solution = AllocationSolution(offsets={"a": 0, "b": 6, "ghost": 0})
    assert find_allocation_errors(problem, solution) == [
        "block 'c' has no offset",
        "block 'b' offset 6 is not aligned to 4",
        "block 'b' ends at 16, beyond capacity 15",
        "offset given for unknown block 'ghost'",
        "blocks 'a' and 'b' overlap in time and memory",
    ]


def test_verifier_accepts_a_valid_solution_and_peak_is_measured() -> None:
    problem = AllocationProblem(blocks=(AllocationBlock("a", 0, 2, 10), AllocationBlock("b", 2, 3, 10)), capacity=10)
    solution = AllocationSolution(offsets={"a": 0, "b": 0})
    assert find_allocation_errors(problem, solution) == [] and solution.peak(problem) == 10


def test_blocks_reject_empty_lifetimes_and_duplicate_ids() -> None:
    with pytest.raises(ValueError, match="empty lifetime"):
        AllocationBlock("a", 3, 3, 1)
    with pytest.raises(ValueError, match="duplicate block ids"):
        AllocationProblem(blocks=(AllocationBlock("a", 0, 1, 1), AllocationBlock("a", 1, 2, 1)))
