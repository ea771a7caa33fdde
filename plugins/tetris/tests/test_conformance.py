"""Both Tetris allocators against the core's allocator contract, plus what makes them Tetris."""

from __future__ import annotations

from deeploy_core.allocation import AllocationBlock, AllocationProblem, find_allocation_errors
from deeploy_core.testing import AllocatorConformance
from deeploy_core.testing.conformance.allocator import random_problem
from deeploy_tetris import TetrisCoOptAllocator, TetrisRandomAllocator
from deeploy_tetris import plugin as tetris_plugin


class TestTetrisRandom(AllocatorConformance):
    plugin = tetris_plugin
    plugin_name = "tetris"
    allocator_name = "tetris-random"


class TestTetrisCoOpt(AllocatorConformance):
    plugin = tetris_plugin
    plugin_name = "tetris"
    allocator_name = "tetris-coopt"


def test_a_single_order_is_the_plain_tetris_placement() -> None:
    """One try, blocks falling in the order drawn: each lands directly on the highest block alive with it."""
    problem = AllocationProblem((AllocationBlock("a", 0, 2, 40), AllocationBlock("b", 1, 3, 24),
                                 AllocationBlock("c", 2, 4, 40)))
    offsets = TetrisRandomAllocator(seed=3, tries=1).solve(problem).offsets
    for block in problem.blocks:
        below = [o for o in problem.blocks if o.id != block.id and o.overlaps_in_time(block)
                 and offsets[o.id] < offsets[block.id]]
        assert offsets[block.id] in {0, *(offsets[o.id] + o.size for o in below)}


def test_coopt_is_never_worse_than_random_and_often_better() -> None:
    better = 0
    for seed in range(10):
        problem = random_problem(seed, count=40)
        random_solution = TetrisRandomAllocator(seed=0, tries=4).solve(problem)
        coopt_solution = TetrisCoOptAllocator(seed=0, tries=4, time_limit=2.0).solve(problem)
        assert find_allocation_errors(problem, coopt_solution) == []
        assert coopt_solution.peak(problem) <= random_solution.peak(problem)
        assert coopt_solution.peak(problem) >= problem.lower_bound()
        better += coopt_solution.peak(problem) < random_solution.peak(problem)
    assert better >= 3, f"CP-SAT improved on the random order in only {better} of 10 instances"


def test_coopt_proves_a_capacity_impossible_that_random_orders_miss() -> None:
    """Capacity below the lower bound: the reason says no order fits (proved), not merely 'not found'."""
    problem = AllocationProblem((AllocationBlock("a", 0, 2, 40), AllocationBlock("b", 1, 3, 40)), capacity=79)
    solution = TetrisCoOptAllocator().solve(problem)
    assert not solution.feasible and "lower bound 80" in solution.reason
