"""The cluster through the command line: analyze shows the estimate, report.json has it, options are checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

ENV = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c,pulp-cluster", "COLUMNS": "200"}


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True, env=ENV)


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(5)
    weights = numpy_helper.from_array(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), "w")
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "conv_relu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 32, 32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 32, 32])], [weights])
    path = tmp_path_factory.mktemp("model") / "conv_relu.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_analyze_prints_the_estimated_cycles_per_layer(model: Path) -> None:
    result = cli("analyze", str(model), "--platform", "pulp-cluster", "--l1", "32768")
    assert result.returncode == 0, result.stderr
    assert "estimated cycles:" in result.stdout
    assert "conv" in result.stdout and "relu" in result.stdout


def test_report_has_cores_levels_and_an_estimate_that_favours_double_buffering(model: Path, tmp_path: Path) -> None:
    cycles = {}
    for buffering in ("single", "double"):
        out = tmp_path / buffering
        result = cli("compile", str(model), "--platform", "pulp-cluster", "--l1", "32768", "--l2", "458752",
                     "--cores", "4", "--buffering", buffering, "-o", str(out))
        assert result.returncode == 0, result.stderr
        report = json.loads((out / "report.json").read_text())
        assert report["cluster"] == {"cores": 4, "level_sizes": {"L1": 32768, "L2": 458752, "L3": 64 * 1024 * 1024}}
        estimate = report["estimate"]
        assert len(estimate["macs_per_core"]) == 4 and sum(estimate["macs_per_core"]) >= 16 * 32 * 32 * 8 * 9
        assert [layer["layer"] for layer in estimate["layers"]] == ["conv", "relu"]
        # conv and relu are one fused pattern: the input comes in, only the relu's output goes back
        assert [pattern["layers"] for pattern in report["tiling"]["patterns"]] == [["conv", "relu"]]
        assert estimate["dma_bytes"]["L2->L1"] >= 8 * 32 * 32 * 4 and estimate["dma_bytes"]["L1->L2"] == 16 * 32 * 32 * 4
        cycles[buffering] = estimate["cycles"]
        source = (out / "Network.c").read_text()
        assert "pulp_cluster_fork(" in source and "{32768u, 458752u, 67108864u, 4u}" in source
    assert cycles["double"] < cycles["single"]


def test_a_core_count_the_cluster_does_not_have_is_one_line(model: Path, tmp_path: Path) -> None:
    result = cli("compile", str(model), "--platform", "pulp-cluster", "--cores", "17", "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: --cores 17: option 'cores' of platform 'pulp-cluster' takes an integer "
                                     "from 1 to 16, got 17")
    assert not (tmp_path / "out").exists()


def test_zero_cores_is_a_usage_error(model: Path, tmp_path: Path) -> None:
    result = cli("compile", str(model), "--platform", "pulp-cluster", "--cores", "0", "-o", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == "Error: Invalid value for '--cores': 0 is not in the range x>=1."
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()
