"""Tetris-Random and Tetris-CoOpt on every Deeploy peer network.

Untiled, both allocate the activation arena; the maps are re-verified from
the deployer. Co-Opt's arena must never exceed Random's. Tiled (L1 = 16000 B,
double buffering), Tetris-CoOpt places the tile buffers inside the tiler's
CP-SAT model; the generated C is built, run and compared with the golden
outputs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.allocator_on_peers import arena_with, check_tiled_run
from deeploy_core.testing.peer_tests import find_peer_tests, peer_tests_root

ROOT = peer_tests_root(Path(__file__).parent)
TESTS = find_peer_tests(ROOT) if ROOT else []
MISSING = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_coopt_arena_is_verified_and_never_above_random(peer, tetris_host: PluginHost) -> None:
    _, random_memory = arena_with(peer, "tetris-random", tetris_host)
    _, coopt_memory = arena_with(peer, "tetris-coopt", tetris_host)
    assert random_memory["lower_bound_bytes"] <= coopt_memory["arena_bytes"] <= random_memory["arena_bytes"]


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_coopt_inside_the_tiler_runs_correctly(peer, tetris_host: PluginHost, tetris_runtime_cache: Path) -> None:
    check_tiled_run(peer, "tetris-coopt", tetris_host, tetris_runtime_cache)
