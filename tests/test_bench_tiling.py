"""``bench/tiling.py --fusion-compare``: one small peer network at one L1, both columns filled with numbers."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deeploy_core.testing.peer_tests import peer_tests_root

BENCH = Path(__file__).resolve().parents[1] / "bench" / "tiling.py"
NETWORK = "Models/miniMobileNet"


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c,pulp-cluster"}
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.skipif(peer_tests_root(BENCH.parent) is None,
                    reason="Deeploy's peer tests (../shared/peer-tests/deeploy) are not on this machine")
@pytest.mark.skipif(importlib.util.find_spec("deeploy_pulp_cluster") is None,
                    reason="the pulp-cluster plugin (deeploy-pulp-cluster) is not installed")
def test_the_comparison_prints_layer_wise_and_fused_figures() -> None:
    result = bench("--fusion-compare", "--networks", "peer", "--filter", NETWORK, "--l1", "32000",
                   "--buffering", "single")
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("network ") and "L2<->L1 lw" in line)
    assert header.split()[3:7] == ["L2<->L1", "lw", "L2<->L1", "fu"]
    row = next(line for line in lines if line.startswith(NETWORK + " "))
    cells = row.split()
    assert cells[1:3] == ["32000", "single"], row
    layerwise, fused, reduction = int(cells[3]), int(cells[4]), float(cells[5])
    assert layerwise > 0 and fused > 0, row
    assert reduction == pytest.approx(100 * (layerwise - fused) / layerwise, abs=0.05)
    assert all(re.fullmatch(r"\d+(\.\d+)?", cell) for cell in cells[6:]), row  # patterns, peaks, cycles, seconds
    assert re.search(r"settings: 1  compared: 1  fused traffic lower: \d  equal: \d  higher: \d  failed: 0",
                     result.stdout), result.stdout


@pytest.mark.skipif(peer_tests_root(BENCH.parent) is None,
                    reason="Deeploy's peer tests (../shared/peer-tests/deeploy) are not on this machine")
def test_a_filter_that_matches_nothing_is_a_usage_error() -> None:
    result = bench("--fusion-compare", "--networks", "peer", "--filter", "no/such/network")
    assert result.returncode == 2 and "no network matches" in result.stderr
