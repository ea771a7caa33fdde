"""``bench/fuzz.py``, the long fuzzing profile: a three-graph run prints its counts and exits 0."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"


def bench(*args: str, plugins: str = "generic-c") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": plugins}
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.skipif(importlib.util.find_spec("deeploy_generic_c") is None,
                    reason="the generic C plugin (deeploy-generic-c) is not installed")
def test_a_short_run_prints_the_counts_and_coverage(tmp_path: Path) -> None:
    result = bench("--graphs", "3", "--seed", "5", "--platforms", "generic-c", "--keep", str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    counts = re.search(r"compiles: (\d+)  compiled: (\d+)  built: (\d+)  run: (\d+)  matched: (\d+)  "
                       r"mismatches: 0  crashes: 0  rejected: 0", result.stdout)
    assert counts and counts.groups() == ("3",) * 5, result.stdout
    assert re.search(r"graphs generated: 3 ", result.stdout)
    assert "features (graphs):" in result.stdout and re.search(r"wall time: [\d.]+ s", result.stdout)


def test_a_platform_that_is_not_installed_is_refused() -> None:
    result = bench("--graphs", "1", "--platforms", "no-such-platform", plugins="")
    assert result.returncode == 2 and "platforms not installed: no-such-platform" in result.stderr
