"""The conformance suite's merged batches judge every case as it would be judged alone.

One batch holds a passing case, a case whose expected output is wrong, a
case the platform refuses and a passing case of another op: the wrong one
fails alone with its own message, the refused one is skipped with the
platform's reason, and the two others still pass — in one merged compile.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from deeploy_core.plugins import PluginHost
from deeploy_core.testing.conformance import node_batches
from deeploy_core.testing.conformance.node_batches import BatchJudge, merged_model
from deeploy_core.testing.node_cases import NodeCase


def _case(name: str, op: str, x: np.ndarray, expected: np.ndarray, **attrs: object) -> NodeCase:
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], name,
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(expected.shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return NodeCase(name, op, model, {"x": x}, [expected], 1e-6, 1e-5)


X = np.array([[-1.0, 0.5], [2.0, -3.0]], np.float32)
CASES = [
    _case("relu_right", "Relu", X, np.maximum(X, 0)),
    _case("relu_wrong", "Relu", X, np.maximum(X, 0) + np.float32(0.25)),
    _case("lp_norm_p3_refused", "LpNormalization", X, X, p=3),  # p=3: no kernel takes it
    _case("neg_right", "Neg", X, -X),
]


@pytest.fixture(scope="module")
def host() -> PluginHost:
    return PluginHost.discover()


def test_a_batch_judges_each_case_alone(host: PluginHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[int] = []
    original = node_batches.compile_model
    monkeypatch.setattr(node_batches, "compile_model",
                        lambda path, *args: compiled.append(1) or original(path, *args))
    judge = BatchJudge(CASES, "generic-c", host, tmp_path)
    verdicts = {case.name: judge.verdict(case) for case in CASES}
    assert {name: v.status for name, v in verdicts.items()} == {
        "relu_right": "passed", "relu_wrong": "failed", "lp_norm_p3_refused": "skipped", "neg_right": "passed"}
    assert verdicts["relu_wrong"].message == "relu_wrong: output y max abs error 0.25, 4/4 elements outside tolerance"
    assert "LpNormalization" in verdicts["lp_norm_p3_refused"].message
    assert len(compiled) == 2  # the batch, then the batch without the refused case: no single compiles


def test_merged_names_are_prefixed_per_case() -> None:
    model = merged_model(CASES[:2])
    assert [value.name for value in model.graph.input] == ["c0_x", "c1_x"]
    assert [value.name for value in model.graph.output] == ["c0_y", "c1_y"]
    assert [list(node.input) for node in model.graph.node] == [["c0_x"], ["c1_x"]]
