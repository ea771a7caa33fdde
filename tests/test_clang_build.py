"""Generated code is not written for one compiler: every peer model and MLPerf network builds warning-free with clang
and passes its self-test bit-exactly (bench/run_speed.py times the same builds; issue 21 asks for speed with both).

CI installs clang (.ci/run); where it is missing the tests skip and say so.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome
from deeploy_core.testing.peer_tests import peer_tests_root

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")

PEER_ROOT = peer_tests_root(Path(__file__).parent)
SHARED = PEER_ROOT.parent.parent if PEER_ROOT else None
NETWORKS = sorted(
    [*(PEER_ROOT / "Models").rglob("network.onnx"), *(SHARED / "bench" / "deeploy-mlperf").rglob("network.onnx")]
) if PEER_ROOT and SHARED else []
CLANG = shutil.which("clang")
STRICT_FLAGS = "-O2 -Wall -Wextra -Wshadow -Werror"
"""Warnings are errors here: the folder must build silently with a second compiler too."""


def network_id(model: Path) -> str:
    return model.parent.name


def compile_folder(tmp_path: Path, model: Path, platform: str) -> tuple[CliOutcome, Path]:
    folder = model.parent
    is_float = "/FP32/" in folder.as_posix() + "/"
    typing = [] if is_float else ["--input-types-from", str(folder / "inputs.npz")]
    lab = CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": "generic-c,pulp-cluster"})
    output = tmp_path / "out"
    outcome = lab.invoke(["compile", str(model), "--platform", platform, "-o", str(output), "--quiet", *typing,
                          "--inputs", str(folder / "inputs.npz"), "--outputs", str(folder / "outputs.npz"),
                          "--atol", "1e-4" if is_float else "0"])
    return outcome, output


@pytest.mark.skipif(PEER_ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.skipif(CLANG is None, reason="clang not installed (Debian package clang; .ci/run installs it)")
@pytest.mark.parametrize("model", NETWORKS, ids=[network_id(model) for model in NETWORKS])
def test_network_builds_with_clang_without_warnings_and_matches(model: Path, tmp_path: Path) -> None:
    outcome, folder = compile_folder(tmp_path, model, "generic-c")
    assert outcome.ok, outcome.describe()
    built = subprocess.run(["make", "-C", str(folder), "test", f"CC={CLANG}", f"CFLAGS={STRICT_FLAGS}"],
                           capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "warning:" not in built.stderr
    assert "self-test passed" in built.stdout


@pytest.mark.skipif(PEER_ROOT is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing")
@pytest.mark.skipif(CLANG is None, reason="clang not installed (Debian package clang; .ci/run installs it)")
def test_clang_covers_every_network() -> None:
    names = {network_id(model) for model in NETWORKS}
    assert {"CCT_1_16_16_8", "ReduceMean", "ImageClassification", "VisualWakeWords", "AnomalyDetection"} <= names
