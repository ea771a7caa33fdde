"""Tetris-Random and Tetris-CoOpt on every Deeploy peer network.

Untiled, both allocate the activation arena; the compiler's own verifier
checks every map, and this test checks it again from the report. Co-Opt's
arena must never exceed Random's. Tiled (L1 = 16000 B, double buffering),
Tetris-CoOpt places the tile buffers inside the tiler's CP-SAT model; the
generated C is built, run and compared with the golden outputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.allocation import AllocationBlock, AllocationProblem, AllocationSolution, find_allocation_errors
from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
TESTS = find_peer_tests(ROOT) if ROOT else []
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"


def _arena(peer, allocator: str, host: PluginHost) -> tuple[int, int]:
    """(arena bytes, lower bound) after re-verifying the arena map the compile reported."""
    deployer, generated = compile_model(
        peer.model, CompileOptions(platform="generic-c", input_types=peer.input_types(), allocator=allocator), host)
    plan = deployer.memory_plan
    blocks = tuple(AllocationBlock(name, life.first, life.end, max(deployer.ctxt[name].size_bytes, 1))
                   for name, life in plan.lifetimes.items())
    problem = AllocationProblem(blocks, capacity=plan.arena_bytes)
    assert find_allocation_errors(problem, AllocationSolution(plan.offsets)) == []
    memory = generated.report["memory"]
    assert memory["allocator"] == allocator
    return memory["arena_bytes"], memory["lower_bound_bytes"]


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_coopt_arena_is_verified_and_never_above_random(peer, tetris_host: PluginHost) -> None:
    random_arena, bound = _arena(peer, "tetris-random", tetris_host)
    coopt_arena, _ = _arena(peer, "tetris-coopt", tetris_host)
    assert bound <= coopt_arena <= random_arena


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_coopt_inside_the_tiler_runs_correctly(peer, tetris_host: PluginHost, tetris_runtime_cache: Path) -> None:
    options = CompileOptions(platform="generic-c", input_types=peer.input_types(), allocator="tetris-coopt",
                             level_sizes={"L1": 16000}, buffering="double")
    tolerance = 1e-4 if peer.is_float else 0.0
    generated, result = validate_model(peer.model, options, tetris_host, inputs_npz=peer.inputs,
                                       outputs_npz=peer.outputs, atol=tolerance, rtol=tolerance, repeats=1,
                                       cache_dir=tetris_runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    level = generated.report["memory_levels"]["L1"]
    assert level["used"] <= level["capacity"] == 16000
