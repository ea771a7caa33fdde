"""The front end's shape folding costs a fixed number of graph copies and ONNX Runtime sessions per round.

onnx-graphsurgeon's ``basic`` partitioning copied the whole graph and opened
a session for every folded node, so a TorchScript export with a few hundred
shape nodes spent seconds there (issue 31, item 4).  Folding now evaluates
all constants of a round in one session, falls back to partitioning only
when that session fails, and skips the last round when nothing could fold;
folding a flat graph now works on the protobuf itself
(:mod:`deeploy_core.frontend.constant_round`), so it copies no
onnx-graphsurgeon graph at all; these tests count copies and sessions (timings are
``bench/folding_cost.py``'s business), check the fallback still folds what
it can and that a round is skipped only when nothing could fold.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.frontend.fold_candidates import may_fold
from deeploy_core.frontend.shape_folding import KEPT_OPS, fold_shape_arithmetic


def _constant(nodes: list[onnx.NodeProto], name: str, value: object) -> str:
    nodes.append(helper.make_node("Constant", [], [name], value=numpy_helper.from_array(np.asarray(value, np.int64))))
    return name


def halved_reshapes(chains: int, out_of_range_gather: bool = False) -> onnx.ModelProto:
    """``chains`` reshapes of ``x`` (1×4×4×8) to a size computed as the TorchScript exporter writes ``x.size(3) //
    2``: Shape, Gather, Cast to float, Div, Cast back, Concat.  onnx's data propagation stops at ``Div``, so every
    reshape is unshaped until folded.  ``out_of_range_gather`` adds a constant ``Gather`` that ONNX Runtime refuses
    (index 5 of 3 values): an unfoldable subgraph next to the foldable ones."""
    nodes: list[onnx.NodeProto] = []
    outputs = []
    for chain in range(chains):
        prefix = f"/chain{chain}"
        nodes += [
            helper.make_node("Shape", ["x"], [f"{prefix}/shape"]),
            helper.make_node("Gather", [f"{prefix}/shape", _constant(nodes, f"{prefix}/three", 3)], [f"{prefix}/last"],
                             axis=0),
            helper.make_node("Cast", [f"{prefix}/last"], [f"{prefix}/float"], to=TensorProto.FLOAT),
            helper.make_node("Div", [f"{prefix}/float", f"{prefix}/two"], [f"{prefix}/half"]),
            helper.make_node("Cast", [f"{prefix}/half"], [f"{prefix}/integer"], to=TensorProto.INT64),
            helper.make_node("Unsqueeze", [f"{prefix}/integer", _constant(nodes, f"{prefix}/axis", [0])],
                             [f"{prefix}/size"]),
            helper.make_node("Concat", [_constant(nodes, f"{prefix}/leading", [1, 4, 4, 2]), f"{prefix}/size"],
                             [f"{prefix}/target"], axis=0),
            helper.make_node("Reshape", ["x", f"{prefix}/target"], [f"y{chain}"]),
        ]
        nodes.insert(0, helper.make_node("Constant", [], [f"{prefix}/two"],
                                         value=numpy_helper.from_array(np.asarray(2.0, np.float32))))
        outputs.append(helper.make_tensor_value_info(f"y{chain}", TensorProto.FLOAT, None))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4, 8])]
    if out_of_range_gather:
        nodes += [helper.make_node("Gather", [_constant(nodes, "/values", [1, 2, 3]), _constant(nodes, "/index", [5])],
                                   ["/gathered"], axis=0),
                  helper.make_node("Add", ["/gathered", "offset"], ["z"])]
        inputs.append(helper.make_tensor_value_info("offset", TensorProto.INT64, [1]))
        outputs.append(helper.make_tensor_value_info("z", TensorProto.INT64, [1]))
    graph = helper.make_graph(nodes, "halved", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture
def counts(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often folding copies an onnx-graphsurgeon graph and opens an ONNX Runtime session."""
    seen: Counter[str] = Counter()
    copy = gs.Graph.copy
    session = onnxruntime.InferenceSession

    def counted_copy(self: gs.Graph, *args: Any, **kwargs: Any) -> gs.Graph:
        seen["copies"] += 1
        return copy(self, *args, **kwargs)

    def counted_session(*args: Any, **kwargs: Any) -> onnxruntime.InferenceSession:
        seen["sessions"] += 1
        return session(*args, **kwargs)

    monkeypatch.setattr(gs.Graph, "copy", counted_copy)
    monkeypatch.setattr(onnxruntime, "InferenceSession", counted_session)
    return seen


def _folded(model: onnx.ModelProto, counts: Counter[str]) -> tuple[onnx.ModelProto, dict[str, int]]:
    counts.clear()
    fold_shape_arithmetic(model)
    return model, dict(counts)


def test_copies_and_sessions_do_not_grow_with_the_folded_nodes(counts: Counter[str]) -> None:
    few, few_counts = _folded(halved_reshapes(2), counts)
    many, many_counts = _folded(halved_reshapes(16), counts)
    for model in (few, many):
        assert {node.op_type for node in model.graph.node} == {"Reshape"}, "every chain folds away"
    assert few_counts == many_counts, f"2 chains: {few_counts}, 16 chains: {many_counts}"
    # one round folds everything, on the protobuf (no onnx-graphsurgeon graph at all); the round after it, which
    # would find nothing, is not run
    assert many_counts == {"sessions": 1}, many_counts


def _branch(value: float) -> onnx.GraphProto:
    return helper.make_graph([helper.make_node("Constant", [], ["out"], value_float=value)], "branch", [],
                             [helper.make_tensor_value_info("out", TensorProto.FLOAT, [])])


def test_a_round_is_skipped_only_when_nothing_could_fold() -> None:
    """may_fold answers no for the folded graph and yes for each kind of work onnx-graphsurgeon's passes do."""
    folded = halved_reshapes(2)
    fold_shape_arithmetic(folded)
    assert not may_fold(folded.graph, KEPT_OPS)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    int_x = helper.make_tensor_value_info("n", TensorProto.INT64, [2])
    weight = numpy_helper.from_array(np.ones(2, np.float32), "w")
    graphs = {
        "Constant node": helper.make_graph([helper.make_node("Constant", [], ["c"], value_int=1),
                                            helper.make_node("Add", ["n", "c"], ["y"])], "g", [int_x], []),
        "initializers only": helper.make_graph([helper.make_node("Neg", ["w"], ["y"])], "g", [], [],
                                               initializer=[weight]),
        "Shape of a ranked tensor": helper.make_graph([helper.make_node("Shape", ["x"], ["y"])], "g", [x], []),
        "Cast to float into arithmetic": helper.make_graph(
            [helper.make_node("Cast", ["n"], ["f"], to=TensorProto.FLOAT), helper.make_node("Div", ["f", "f"], ["y"])],
            "g", [int_x], []),
        "a node with a subgraph": helper.make_graph(
            [helper.make_node("If", ["b"], ["y"], then_branch=_branch(1.0), else_branch=_branch(2.0))], "g",
            [helper.make_tensor_value_info("b", TensorProto.BOOL, [])], []),
    }
    for reason, graph in graphs.items():
        assert may_fold(graph, KEPT_OPS), reason
    kept = helper.make_graph([helper.make_node("DequantizeLinear", ["w", "w"], ["y"])], "g", [], [],
                             initializer=[weight])
    assert not may_fold(kept, KEPT_OPS), "an op folding keeps is no work"


def test_a_subgraph_onnx_runtime_refuses_leaves_the_others_folded(counts: Counter[str]) -> None:
    """The one session fails on the out-of-range Gather; partitioned folding then folds every chain and keeps it."""
    model, seen = _folded(halved_reshapes(3, out_of_range_gather=True), counts)
    assert sorted(node.op_type for node in model.graph.node) == ["Add", "Gather", "Reshape", "Reshape", "Reshape"]
    assert seen["sessions"] > 2, "the partitioned fallback ran"
