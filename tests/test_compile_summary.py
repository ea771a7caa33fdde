"""The line every compile prints names, for a tiled build, the compute level's peak and the estimated cycles
(issue 33 point 10): what a tiled compile is for was only in report.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from deeploy_core.testing.terminal import run_piped

pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")


@pytest.mark.parametrize(("args", "tiled", "cycles"), [
    (("--platform", "pulp-cluster"), True, True),
    (("--platform", "generic-c", "--l1", "4KiB"), True, False),
    (("--platform", "generic-c"), False, False)])
def test_the_summary_line_says_what_the_tiling_gives(args: tuple[str, ...], tiled: bool, cycles: bool,
                                                      tiny_cnn: Path, tmp_path: Path) -> None:
    done = run_piped("compile", str(tiny_cnn), *args, "-o", str(tmp_path / "o"), plugins="generic-c,pulp-cluster")
    assert done.returncode == 0, done.stderr
    summary = done.stdout.splitlines()[0]
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    match = re.search(r"; L1 peak (\d+) B of (\d+) B(, (\d+) estimated cycles)?$", summary)
    assert (match is not None) == tiled, summary
    if match:
        assert int(match.group(1)) == report["level_peaks"]["L1"] <= int(match.group(2))
        assert int(match.group(2)) == report["memory_levels"]["L1"]["capacity"]
        assert (match.group(4) is not None) == cycles
        if cycles:
            assert int(match.group(4)) == report["estimated_cycles"] > 0
