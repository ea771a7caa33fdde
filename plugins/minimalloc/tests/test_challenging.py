"""The published challenging instances (Moffitt, ASPLOS 2023): all eleven decided at 1 MiB, C minimised to its bound.

Every solution is re-checked here by the core's independent verifier (the
allocator's own answer is not trusted).  The native backend runs all eleven;
the pure-Python one runs the five that take it seconds rather than minutes and
must return the very same offsets (the two backends search node for node alike).
"""

from __future__ import annotations

from typing import Callable

import pytest

from deeploy_core.allocation import AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_minimalloc import MiniMallocAllocator

ALL = tuple("ABCDEFGHIJK")
QUICK_IN_PYTHON = ("G", "H", "I", "J", "K")
CAPACITY = 1_048_576


def _checked(problem: AllocationProblem, solution: AllocationSolution) -> AllocationSolution:
    assert solution.feasible, solution.reason
    assert find_allocation_errors(problem, solution) == []
    assert solution.peak(problem) <= problem.capacity if problem.capacity is not None else True
    return solution


@pytest.mark.parametrize("name", ALL)
def test_native_decides_every_instance_at_one_mebibyte(name: str, native_backend: str,
                                                       challenging: Callable[[str], AllocationProblem]) -> None:
    problem = challenging(name)
    assert problem.capacity == CAPACITY
    allocator = MiniMallocAllocator(backend=native_backend)
    _checked(problem, allocator.solve(problem))
    report = allocator.last_report
    assert report is not None and report.mode == "decide" and not report.time_limit_reached


@pytest.mark.parametrize("name", QUICK_IN_PYTHON)
def test_python_backend_finds_the_same_offsets_as_native(name: str, native_backend: str,
                                                          challenging: Callable[[str], AllocationProblem]) -> None:
    problem = challenging(name)
    native = _checked(problem, MiniMallocAllocator(backend=native_backend).solve(problem))
    allocator = MiniMallocAllocator(backend="python")
    python = _checked(problem, allocator.solve(problem))
    assert python.offsets == native.offsets
    assert allocator.last_report is not None and allocator.last_report.backend == "python"


def test_python_backend_alone_decides_an_instance(challenging: Callable[[str], AllocationProblem]) -> None:
    """Runs even where the C core was not built: the fallback is a complete allocator."""
    problem = challenging("K")
    _checked(problem, MiniMallocAllocator(backend="python").solve(problem))


def test_minimise_packs_instance_c_at_its_lower_bound(backend: str,
                                                      challenging: Callable[[str], AllocationProblem]) -> None:
    problem = challenging("C")
    assert problem.lower_bound() == 1_039_360
    allocator = MiniMallocAllocator(mode="minimise", backend=backend)
    solution = _checked(problem, allocator.solve(problem))
    assert solution.peak(problem) == 1_039_360
    assert "optimal" in solution.reason
    assert allocator.last_report is not None and allocator.last_report.proved_optimal


def test_the_five_buffer_example_of_the_paper(backend: str, challenging: Callable[[str], AllocationProblem]) -> None:
    problem = challenging("input")
    assert problem.capacity == 12 and problem.lower_bound() == 12
    _checked(problem, MiniMallocAllocator(backend=backend).solve(problem))
    tighter = AllocationProblem(problem.blocks, capacity=11)
    refused = MiniMallocAllocator(backend=backend).solve(tighter)
    assert not refused.feasible and "below the lower bound 12" in refused.reason
