"""bench/onnx_node_tests.py: each outcome group is reached by the case that belongs there, and the script counts.

The breadth figure is only as good as its judgement, so a wrong expected
output must land in "mismatch", an op no platform has in "unsupported op",
a string tensor in "string/sequence/optional", and a case whose parameters
must be constants passes in the constants variant.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from onnx import TensorProto, helper

from deeploy_core.plugins import PluginHost
from tests.support.node_breadth import case_named, run_case

BENCH = Path(__file__).resolve().parents[1] / "bench" / "onnx_node_tests.py"


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost.discover()


def _relu_case(expected: np.ndarray) -> SimpleNamespace:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.array([-1.0, 0.5, -2.0, 3.0], np.float32)
    return SimpleNamespace(name="relu_probe", model=model, data_sets=[([x], [expected])])


def test_a_right_answer_passes_and_a_wrong_one_is_a_mismatch(host: PluginHost, tmp_path: Path) -> None:
    right = run_case(_relu_case(np.array([0.0, 0.5, 0.0, 3.0], np.float32)), "generic-c", host, tmp_path)
    wrong = run_case(_relu_case(np.array([0.0, 0.5, 0.0, 3.1], np.float32)), "generic-c", host, tmp_path)
    assert (right.group, right.variant) == ("passed", "as written")
    assert wrong.group == "mismatch" and "1/4 elements" in wrong.reason


def test_unsupported_ops_and_strings_are_grouped(host: PluginHost, tmp_path: Path) -> None:
    dft = run_case(case_named("test_dft"), "generic-c", host, tmp_path)
    strings = run_case(case_named("test_strnormalizer_nostopwords_nochangecase"), "generic-c", host, tmp_path)
    assert (dft.group, dft.op) == ("unsupported op", "DFT")
    assert strings.group == "string/sequence/optional"


def test_constant_parameters_are_the_second_variant(host: PluginHost, tmp_path: Path) -> None:
    """Clip's bounds as graph inputs are refused (the kernel takes constant bounds); as constants it passes."""
    outcome = run_case(case_named("test_clip"), "generic-c", host, tmp_path)
    assert (outcome.group, outcome.variant) == ("passed", "constants")


def test_the_script_prints_passed_over_total_and_writes_every_outcome(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("onnx_node_tests", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    sys.modules["onnx_node_tests"] = bench
    spec.loader.exec_module(bench)
    results = tmp_path / "results.json"
    assert bench.main(["--platforms", "generic-c", "--filter", "^test_(relu|dft)$", "--jobs", "1",
                       "--json", str(results)]) == 0
    printed = capsys.readouterr().out
    assert "generic-c: passed 1 / 2 (50.0 %)" in printed
    assert "unsupported op" in printed and "DFT 1" in printed
    written = json.loads(results.read_text())
    assert [(r["case"], r["group"]) for r in written] == [("test_dft", "unsupported op"), ("test_relu", "passed")]
