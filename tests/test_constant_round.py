"""One fold round on the protobuf (deeploy_core/frontend/constant_round.py): what it folds, what it leaves, and why.

Each test builds a small inferred graph, folds it with an evaluator that
records what it was asked (ONNX Runtime where values matter) and checks the
folded graph node by node and value by value.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.frontend.constant_round import FoldCandidate, can_fold_on_protobuf, fold_round


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[str],
           initializers: list[onnx.TensorProto] = (), value_info: list[onnx.ValueInfoProto] = ()) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info(name) for name in outputs],
                              initializer=list(initializers), value_info=list(value_info))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _runtime(model: onnx.ModelProto, outputs: list[str]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(outputs, {})


def _fold_all(_: FoldCandidate) -> bool:
    return False


def _initializers(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    return {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}


def test_shape_arithmetic_becomes_one_initializer_and_the_rest_keeps_its_order() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"], start=1),
        helper.make_node("Constant", [], ["two"], value_int=2),
        helper.make_node("Mul", ["shape", "two"], ["doubled"]),
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Concat", ["one", "doubled"], ["target"], axis=0),
        helper.make_node("Reshape", ["r", "target"], ["y"]),
        helper.make_node("Neg", ["x"], ["unused"]),
    ]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])], ["y"],
                   [numpy_helper.from_array(np.array([1], np.int64), "one")])
    asked: list[list[str]] = []

    def evaluate(constants: onnx.ModelProto, outputs: list[str]) -> list[np.ndarray]:
        asked.append(outputs)
        return _runtime(constants, outputs)

    folded = fold_round(model, _fold_all, evaluate)
    assert folded is not None
    assert [node.op_type for node in folded.node] == ["Relu", "Reshape"], "the dead Neg goes too"
    assert asked == [["target"]], "only the tensor a remaining node reads is evaluated"
    values = _initializers(folded)
    assert sorted(values) == ["target"], "initializers nobody reads any more are dropped"
    np.testing.assert_array_equal(values["target"], [1, 4, 6])  # Shape(start=1) = [2, 3], doubled, after [1]


def test_gather_and_slice_of_a_partly_known_shape_fold_only_when_they_pick_known_dimensions() -> None:
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
        helper.make_node("Slice", ["shape", "zero_list", "two_list"], ["leading"]),
        helper.make_node("Gather", ["shape", "two"], ["length"], axis=0),
        helper.make_node("Concat", ["leading", "batch"], ["a"], axis=0),
        helper.make_node("Add", ["length", "length"], ["b"]),
    ]
    initializers = [numpy_helper.from_array(np.array(value, np.int64), name)
                    for name, value in (("zero", 0), ("two", 2), ("zero_list", [0]), ("two_list", [2]))]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 5, "n"])
    model = _model(nodes, [x], ["a", "b"], initializers)

    def no_runtime(constants: onnx.ModelProto, outputs: list[str]) -> list[np.ndarray]:
        raise AssertionError(f"nothing here needs ONNX Runtime, asked for {outputs}")

    folded = fold_round(model, lambda candidate: candidate.op == "Concat", no_runtime)
    assert folded is not None
    assert [node.op_type for node in folded.node] == ["Shape", "Gather", "Concat", "Add"]
    values = _initializers(folded)
    np.testing.assert_array_equal(values["batch"], 1)
    assert values["batch"].shape == ()
    np.testing.assert_array_equal(values["leading"], [1, 5])


def test_pinned_outputs_graph_outputs_and_the_policy_keep_their_nodes() -> None:
    nodes = [
        helper.make_node("Constant", [], ["pinned"], value_ints=[1, 2]),
        helper.make_node("Neg", ["w"], ["refused"]),
        helper.make_node("Abs", ["w"], ["out"]),
        helper.make_node("Add", ["pinned", "refused"], ["sum"]),
        helper.make_node("Mul", ["sum", "x"], ["y"]),
    ]
    weight = numpy_helper.from_array(np.array([3, -4], np.int64), "w")
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.INT64, [2])], ["y", "out"], [weight])
    assert fold_round(model, lambda candidate: candidate.op == "Neg", _runtime, pinned={"pinned"}) is None


def test_graphs_with_subgraphs_functions_or_out_of_order_nodes_are_left_to_graphsurgeon() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    in_order = _model([helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["y"])], [x], ["y"])
    assert can_fold_on_protobuf(in_order.graph, [])
    out_of_order = _model([helper.make_node("Neg", ["r"], ["y"]), helper.make_node("Relu", ["x"], ["r"])], [x], ["y"])
    assert not can_fold_on_protobuf(out_of_order.graph, [])
    branch = helper.make_graph([helper.make_node("Constant", [], ["c"], value_float=1.0)], "b", [],
                               [helper.make_tensor_value_info("c", TensorProto.FLOAT, [])])
    nested = _model([helper.make_node("If", ["cond"], ["y"], then_branch=branch, else_branch=branch)],
                    [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])], ["y"])
    assert not can_fold_on_protobuf(nested.graph, [])
    function = helper.make_function("local", "f", ["a"], ["b"], [helper.make_node("Neg", ["a"], ["b"])],
                                    [helper.make_opsetid("", 18)])
    assert not can_fold_on_protobuf(in_order.graph, [function])
