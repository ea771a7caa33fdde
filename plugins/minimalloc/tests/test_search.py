"""The search itself: both backends alike node for node, answers checked against CP-SAT, determinism, limits.

CP-SAT is the oracle on small random instances: a capacity MiniMalloc calls
infeasible must be infeasible for a NoOverlap2D model too (and the other way
round), and the peak MiniMalloc's minimise mode proves optimal must be the
optimum CP-SAT proves.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest
from ortools.sat.python import cp_model

from deeploy_core.allocation import AllocationBlock, AllocationProblem, find_allocation_errors
from deeploy_core.errors import DeeployError
from deeploy_minimalloc import MiniMallocAllocator
from deeploy_minimalloc.backend import BACKEND_ENV, run_search
from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.preordering import DEFAULT_PREORDERING


def _random_problem(rng: random.Random, count: int, alignment: int = 1) -> AllocationProblem:
    blocks = []
    for index in range(count):
        lower = rng.randint(0, 12)
        blocks.append(AllocationBlock(f"b{index}", lower, lower + rng.randint(1, 6), rng.randint(1, 12)))
    return AllocationProblem(tuple(blocks), alignment=alignment)


def _problems(seed: int, amount: int) -> list[AllocationProblem]:
    rng = random.Random(seed)
    return [_random_problem(rng, rng.randint(1, 12), rng.choice((1, 1, 4))) for _ in range(amount)]


def _cp_sat_optimum(problem: AllocationProblem) -> int:
    """The smallest peak of any placement (aligned offsets), proved optimal by CP-SAT."""
    model = cp_model.CpModel()
    horizon = sum(-(-block.size // problem.alignment) * problem.alignment for block in problem.blocks)
    peak = model.NewIntVar(0, horizon, "peak")
    x_intervals, y_intervals = [], []
    for block in problem.blocks:
        slot = model.NewIntVar(0, horizon // problem.alignment, f"slot_{block.id}")
        offset = model.NewIntVar(0, horizon, f"offset_{block.id}")
        model.Add(offset == slot * problem.alignment)
        model.Add(offset + block.size <= peak)
        x_intervals.append(model.NewFixedSizeIntervalVar(block.lower, block.upper - block.lower, f"t_{block.id}"))
        y_intervals.append(model.NewFixedSizeIntervalVar(offset, block.size, f"a_{block.id}"))
    model.AddNoOverlap2D(x_intervals, y_intervals)
    model.Minimize(peak)
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    assert solver.Solve(model) == cp_model.OPTIMAL
    return int(solver.Value(peak))


@pytest.mark.parametrize("seed", range(4))
def test_native_and_python_search_node_for_node_alike(seed: int, native_backend: str) -> None:
    for problem in _problems(seed, 60):
        instance = SearchInstance.from_problem(problem)
        bound = problem.lower_bound()
        for capacity in (bound, bound + 2, bound + 7):
            python = run_search(instance, capacity, DEFAULT_PREORDERING, None, None, "python")
            native = run_search(instance, capacity, DEFAULT_PREORDERING, None, None, native_backend)
            assert (python.status, python.offsets, python.nodes, python.backtracks, python.heuristic) == \
                   (native.status, native.offsets, native.nodes, native.backtracks, native.heuristic)


@pytest.mark.parametrize("seed", range(3))
def test_minimised_peaks_are_the_cp_sat_optimum_and_decisions_agree(seed: int, backend: str) -> None:
    gaps = 0
    for problem in _problems(100 + seed, 25):
        optimum = _cp_sat_optimum(problem)
        gaps += optimum > problem.lower_bound()
        allocator = MiniMallocAllocator(mode="minimise", backend=backend, time_limit=None)
        solution = allocator.solve(problem)
        assert find_allocation_errors(problem, solution) == []
        assert solution.peak(problem) == optimum, solution.reason
        assert allocator.last_report is not None and allocator.last_report.proved_optimal
        if optimum > problem.lower_bound():
            below = AllocationProblem(problem.blocks, capacity=optimum - 1, alignment=problem.alignment)
            refused = MiniMallocAllocator(backend=backend, time_limit=None).solve(below)
            assert not refused.feasible and "proved infeasible" in refused.reason
        at = AllocationProblem(problem.blocks, capacity=optimum, alignment=problem.alignment)
        placed = MiniMallocAllocator(backend=backend, time_limit=None).solve(at)
        assert placed.feasible and find_allocation_errors(at, placed) == []
    assert gaps, "the random problems must include some whose optimum lies above the lower bound"


def test_same_problem_same_offsets_across_processes(backend: str) -> None:
    """Offsets depend on nothing but the problem and the options: not on hash seeds, not on the run."""
    script = (
        "import json, random, sys\n"
        "from deeploy_core.allocation import AllocationBlock, AllocationProblem\n"
        "from deeploy_minimalloc import MiniMallocAllocator\n"
        "rng = random.Random(7)\n"
        "blocks = []\n"
        "for i in range(40):\n"
        "    lo = rng.randint(0, 30); blocks.append(AllocationBlock(f'b{i}', lo, lo + rng.randint(1, 9), rng.randint(1, 64)))\n"
        "problem = AllocationProblem(tuple(blocks))\n"
        "print(json.dumps(MiniMallocAllocator(mode='minimise', backend=sys.argv[1]).solve(problem).offsets, sort_keys=True))\n"
    )
    runs = [subprocess.run([sys.executable, "-c", script, backend], capture_output=True, text=True, check=True,
                           env={"PYTHONHASHSEED": str(seed), "PATH": ""}).stdout for seed in (1, 2)]
    assert runs[0] == runs[1] and json.loads(runs[0])


def test_limits_give_up_without_claiming_a_proof(challenging) -> None:  # type: ignore[no-untyped-def]
    problem = challenging("A")
    budget = MiniMallocAllocator(backend="python", node_limit=50).solve(problem)
    assert not budget.feasible
    assert "node limit reached (50 nodes per heuristic)" in budget.reason and "not proved infeasible" in budget.reason
    timed = MiniMallocAllocator(backend="python", time_limit=0).solve(problem)
    assert not timed.feasible and "time limit reached (0 s)" in timed.reason and "not proved" in timed.reason


@pytest.mark.parametrize("options, message", [
    ({"mode": "fastest"}, "unknown mode 'fastest'"),
    ({"time_limit": -1}, "time_limit must be a non-negative number"),
    ({"node_limit": 0}, "node_limit must be a positive integer"),
    ({"backend": "gpu"}, "unknown backend 'gpu' in backend option"),
    ({"preordering": "WXY"}, "X"),
])
def test_bad_options_are_named(options: dict[str, object], message: str) -> None:
    with pytest.raises(DeeployError) as raised:
        MiniMallocAllocator(**options)  # type: ignore[arg-type]
    assert message in str(raised.value) and str(raised.value).startswith("minimalloc")


def test_backend_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKEND_ENV, "python")
    assert MiniMallocAllocator().backend == "python"
    monkeypatch.setenv(BACKEND_ENV, "nonsense")
    with pytest.raises(DeeployError, match=BACKEND_ENV):
        MiniMallocAllocator()


def test_decide_needs_a_capacity() -> None:
    problem = AllocationProblem((AllocationBlock("a", 0, 1, 8),))
    with pytest.raises(DeeployError, match="needs a problem with a capacity"):
        MiniMallocAllocator(mode="decide").solve(problem)
    assert MiniMallocAllocator().solve(problem).offsets == {"a": 0}


def test_minimisation_stops_at_its_node_budget_and_says_so(backend: str) -> None:
    """The budget, a count of nodes, ends the bisection: same answer on any machine, and the reason admits the gap."""
    from deeploy_core.testing.conformance.allocator import random_problem

    problem = random_problem(9)  # alignment leaves the lower bound out of reach
    runs = []
    for _ in range(2):
        allocator = MiniMallocAllocator(backend=backend, minimise_budget=20_000, time_limit=None)
        solution = allocator.solve(problem)
        assert find_allocation_errors(problem, solution) == []
        report = allocator.last_report
        assert report is not None and not report.time_limit_reached and 0 < report.nodes <= 40_000
        runs.append((solution.offsets, solution.reason))
    assert runs[0] == runs[1]
    assert "not proved optimal" in runs[0][1] and "node budget of 20000 spent" in runs[0][1]
