"""``bench/alloc.py``: any registered allocator on instance CSVs, solutions written and verified."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

from deeploy_core.allocation import AllocationSolution, find_allocation_errors, read_instance

BENCH = Path(__file__).resolve().parents[1] / "bench" / "alloc.py"
ROWS = "id,lower,upper,size\na,0,2,40\nb,1,3,24\nc,2,4,40\n"


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": ""}  # built-in allocator only
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, env=env)


def test_solves_writes_and_prints_the_figures(tmp_path: Path) -> None:
    instance = tmp_path / "exact.64.csv"
    instance.write_text(ROWS)
    output = tmp_path / "solution.csv"
    result = bench("--allocator", "first-fit", "--output", str(output), str(instance))
    assert result.returncode == 0, result.stderr
    row = next(line for line in result.stdout.splitlines() if line.startswith("exact.64.csv"))
    assert row.split() == ["exact.64.csv", "3", "64", "64", "0.0", "64", "yes", row.split()[-1]]
    with open(output, newline="") as handle:
        offsets = {r["id"]: int(r["offset"]) for r in csv.DictReader(handle)}
    problem = read_instance(instance)
    assert problem.capacity == 64
    assert find_allocation_errors(problem, AllocationSolution(offsets)) == []


def test_an_unsolved_instance_makes_the_exit_code_non_zero(tmp_path: Path) -> None:
    instance = tmp_path / "tight.csv"
    instance.write_text(ROWS)
    result = bench("--allocator", "first-fit", "--capacity", "63", str(instance))
    assert result.returncode == 1
    assert " NO " in result.stdout and "capacity is 63" in result.stdout


def test_unknown_allocator_and_unsupported_time_limit_are_usage_errors(tmp_path: Path) -> None:
    instance = tmp_path / "any.csv"
    instance.write_text(ROWS)
    unknown = bench("--allocator", "nope", str(instance))
    assert unknown.returncode == 2 and "no allocator named 'nope' (available: first-fit)" in unknown.stderr
    limited = bench("--allocator", "first-fit", "--time-limit", "1", str(instance))
    assert limited.returncode == 2 and limited.stderr.strip() == (
        "error: --time-limit 1: no selected extension takes an option 'time_limit' (the selected ones take: "
        "allocator 'first-fit': no options)")
    option = bench("--allocator", "first-fit", "--option", "mode=minimise", str(instance))
    assert option.returncode == 2 and "no selected extension takes an option 'mode'" in option.stderr
    malformed = bench("--allocator", "first-fit", "--option", "mode", str(instance))
    assert malformed.returncode == 2 and "--option mode: expected NAME=VALUE" in malformed.stderr
    broken = tmp_path / "broken.csv"
    broken.write_text("id,lower,upper,size\nx,3,1,8\n")
    refused = bench("--allocator", "first-fit", str(broken))
    assert refused.returncode == 2 and "empty lifetime" in refused.stderr and "Traceback" not in refused.stderr
