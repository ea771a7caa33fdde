"""MiniMalloc on the memory maps of every Deeploy peer network.

Untiled, it allocates the activation arena (minimise mode: no capacity),
which must reach the lower bound (the most bytes alive at one step) or say
how far above it stayed; the arena map is re-verified from the deployer.
Tiled (L1 = 16000 B, double buffering) it decides each layer's L1 map under
the level's capacity, and the generated C is built, run and compared with
the golden outputs.
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
def test_arena_reaches_the_lower_bound_or_reports_the_gap(peer, minimalloc_host: PluginHost) -> None:
    deployer, memory = arena_with(peer, "minimalloc", minimalloc_host)
    report = deployer.compilation.allocator.last_report
    assert report is not None and report.mode == "minimise"
    if memory["arena_bytes"] > memory["lower_bound_bytes"]:
        assert not report.reached_lower_bound and report.peak is not None
        pytest.fail(f"arena {memory['arena_bytes']} B stays {memory['arena_bytes'] - memory['lower_bound_bytes']} B "
                    f"above the lower bound {memory['lower_bound_bytes']} B: {report}")
    assert report.reached_lower_bound


@pytest.mark.skipif(ROOT is None, reason=MISSING)
@pytest.mark.parametrize("peer", TESTS, ids=[test.name for test in TESTS])
def test_tiled_l1_maps_run_correctly(peer, minimalloc_host: PluginHost, minimalloc_runtime_cache: Path) -> None:
    check_tiled_run(peer, "minimalloc", minimalloc_host, minimalloc_runtime_cache)
