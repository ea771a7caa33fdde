"""bench/cluster_coverage.py validates a network on generic-c and on the cluster at each L1 size and prints the row.

One peer network is enough to see that the row is real (every cell validated, the smallest L1 probed and then
validated at that size) and that ``--filter`` and ``--markdown`` do what they say; the whole table is a benchmark.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from deeploy_core.testing.peer_tests import peer_tests_root

BENCH = Path(__file__).resolve().parent.parent / "bench" / "cluster_coverage.py"
ROOT = peer_tests_root(Path(__file__).parent)


@pytest.mark.skipif(ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
def test_one_network_row_is_validated_everywhere() -> None:
    result = subprocess.run([sys.executable, str(BENCH), "--filter", "Kernels/FP32/Add/Regular", "--jobs", "1",
                             "--markdown"], capture_output=True, text=True, timeout=600, check=False)
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("| Kernels/")]
    assert len(rows) == 1, result.stdout  # the filter keeps one network; markdown rows
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[0] == "Kernels/FP32/Add/Regular"
    assert cells[1:5] == ["ok", "ok", "ok", "ok"], cells
    size, status = cells[5].split()
    assert int(size) > 1 and status == "ok", cells
    assert "1 networks; 1 validate on generic-c; of those, 1 validate on pulp-cluster" in result.stdout
