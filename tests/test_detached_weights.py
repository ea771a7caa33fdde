"""Big float weights leave the model while onnx's tools run and come back unchanged (issue 21 item 1)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.frontend.detached_weights import DETACH_BYTES, detach_large_weights
from deeploy_core.frontend.importer import canonicalise


def model_with(weight_listed_as_input: bool) -> onnx.ModelProto:
    big = numpy_helper.from_array(np.random.default_rng(0).standard_normal((128, 256)).astype(np.float32), "w")
    shape = numpy_helper.from_array(np.array([1, 256], dtype=np.int64), "shape")
    small = numpy_helper.from_array(np.ones(256, dtype=np.float32), "b")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "b"], ["a"]),
             helper.make_node("Reshape", ["a", "shape"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128])]
    if weight_listed_as_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, [128, 256]))
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 256])],
                              [big, shape, small])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_only_large_float_initializers_are_detached_and_come_back() -> None:
    for listed in (False, True):
        model = model_with(listed)
        before = [tensor.SerializeToString() for tensor in model.graph.initializer]
        inputs_before = [value.name for value in model.graph.input]
        detached = detach_large_weights(model)
        assert [tensor.name for tensor in detached.initializers] == ["w"]
        assert 128 * 256 * 4 > DETACH_BYTES and [t.name for t in model.graph.initializer] == ["shape", "b"]
        assert "w" in [value.name for value in model.graph.input]
        assert detached.stand_ins == (frozenset() if listed else frozenset({"w"}))
        detached.reattach(model)
        assert [value.name for value in model.graph.input] == inputs_before
        assert sorted(tensor.SerializeToString() for tensor in model.graph.initializer) == sorted(before)


def test_the_imported_graph_holds_the_weight_values() -> None:
    model = model_with(False)
    expected = numpy_helper.to_array(model.graph.initializer[0])
    imported = canonicalise(model)
    assert [value.name for value in imported.model.graph.input] == ["x"]
    weights = {tensor.name: numpy_helper.to_array(tensor) for tensor in imported.model.graph.initializer}
    np.testing.assert_array_equal(weights["w"], expected)
    assert [tensor.name for tensor in imported.graph.inputs] == ["x"]
