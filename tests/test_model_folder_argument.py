"""A Deeploy test folder (network.onnx, inputs.npz, outputs.npz) as MODEL of compile, validate and analyze
(issue 33 point 10: sweep took it, compile said "is a folder, not an ONNX file")."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from deeploy_core.testing.peer_tests import peer_tests_root
from deeploy_core.testing.terminal import run_piped

PEERS = peer_tests_root()
FOLDER = None if PEERS is None else PEERS / "Kernels" / "Integer" / "Conv" / "Regular_2D_RQ"
pytestmark = pytest.mark.skipif(FOLDER is None, reason="Deeploy's peer tests (../shared/peer-tests/deeploy) are absent")
PLUGINS = "generic-c"


def test_compile_takes_the_folder_and_its_data_for_the_self_test(tmp_path: Path) -> None:
    assert FOLDER is not None
    done = run_piped("compile", str(FOLDER), "-o", str(tmp_path / "out"), plugins=PLUGINS)
    assert done.returncode == 0, done.stderr
    assert f"using inputs.npz and outputs.npz of {FOLDER} (give --inputs to use other data)" in done.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["layers"][0]["op"] == "RequantizedConv", "input types from the folder's inputs.npz: integer"
    built = subprocess.run(["make", "-s", "-C", str(tmp_path / "out"), "test"], capture_output=True, text=True)
    assert built.returncode == 0 and "self-test passed" in built.stdout, built.stdout + built.stderr


def test_validate_compares_with_the_folders_expected_outputs() -> None:
    assert FOLDER is not None
    done = run_piped("validate", str(FOLDER), "--quiet", plugins=PLUGINS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "network.onnx on generic-c (reference: golden)"


def test_given_data_wins_over_the_folders(tmp_path: Path) -> None:
    assert FOLDER is not None
    done = run_piped("compile", str(FOLDER), "--inputs", str(FOLDER / "inputs.npz"), "--outputs",
                     str(FOLDER / "outputs.npz"), "-o", str(tmp_path / "out"), plugins=PLUGINS)
    assert done.returncode == 0 and "using inputs.npz" not in done.stderr, done.stderr


def test_analyze_types_the_inputs_from_the_folder() -> None:
    assert FOLDER is not None
    done = run_piped("analyze", str(FOLDER), "--json", "--quiet", plugins=PLUGINS)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["layers"][0]["op"] == "RequantizedConv"


def test_a_folder_without_network_onnx_is_still_refused(tmp_path: Path) -> None:
    done = run_piped("compile", str(tmp_path), "-o", str(tmp_path / "out"), plugins=PLUGINS)
    assert done.returncode == 2 and done.stderr.strip().endswith("is a folder, not an ONNX file"), done.stderr
