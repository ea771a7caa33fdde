"""A DequantizeLinear moves past MaxPool/Flatten/Reshape only where that changes no value.

Brevitas writes ``Q → DQ → MaxPool → Conv`` and ``Q → DQ → Flatten → Gemm``;
after the move the QDQ rewrite sees ``DQ → Conv`` and the pool runs on the
integers.  Each rewritten graph must give ONNX Runtime's outputs of the
original bit for bit; the cases where the move would change values (a
negative scale under MaxPool, per-channel scales under a reshape) or a name
(a graph output) must be left alone.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.lowering.sink_dequantize import sink_dequantize


def _model(follower: onnx.NodeProto, scale: np.ndarray, extra: list[onnx.TensorProto], out_shape: list[int],
           output: str = "y") -> onnx.ModelProto:
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], axis=1), follower]
    if output != "d":  # a layer the move uncovers
        nodes.append(helper.make_node("MatMul", [follower.output[0], "m"], [output]))
    initializers = [numpy_helper.from_array(scale.astype(np.float32), "s"),
                    numpy_helper.from_array(np.full(scale.shape, 3, np.int8), "z"),
                    numpy_helper.from_array(np.eye(out_shape[-1], dtype=np.float32), "m"), *extra]
    outputs = [helper.make_tensor_value_info(output, TensorProto.FLOAT, out_shape if output != "d" else [1, 2, 4, 4])]
    graph = helper.make_graph(nodes, "sink", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                              outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _run(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(
        None, {"x": x})[0]


MAXPOOL = helper.make_node("MaxPool", ["d"], ["p"], kernel_shape=[2, 2], strides=[1, 1], pads=[1, 1, 0, 0])
FLATTEN = helper.make_node("Flatten", ["d"], ["p"], axis=1)
RESHAPE = helper.make_node("Reshape", ["d", "shape"], ["p"])
SHAPE = [numpy_helper.from_array(np.array([1, 4, 8], np.int64), "shape")]


@pytest.mark.parametrize("follower, extra, shape", [
    (MAXPOOL, [], [1, 2, 4, 4]),
    (FLATTEN, [], [1, 32]),
    (RESHAPE, SHAPE, [1, 4, 8]),
], ids=["maxpool", "flatten", "reshape"])
def test_dequantize_moves_and_values_stay(follower: onnx.NodeProto, extra: list[onnx.TensorProto],
                                          shape: list[int]) -> None:
    model = _model(follower, np.array(0.05), extra, shape)
    graph = gs.import_onnx(model)
    assert sink_dequantize(graph) == 1
    ops = [node.op for node in graph.nodes]
    assert ops.index(follower.op_type) < ops.index("DequantizeLinear")
    assert next(node for node in graph.nodes if node.op == follower.op_type).outputs[0].dtype == np.int8
    rewritten = gs.export_onnx(graph)
    x = np.random.default_rng(0).uniform(-8, 8, (1, 2, 4, 4)).astype(np.float32)
    np.testing.assert_array_equal(_run(rewritten, x), _run(model, x))


@pytest.mark.parametrize("case", ["negative scale under MaxPool", "per-channel under Flatten", "graph output",
                                  "island DQ → MaxPool → Q", "nothing to uncover"])
def test_dequantize_stays_where_moving_it_would_change_something(case: str) -> None:
    if case == "negative scale under MaxPool":
        model = _model(MAXPOOL, np.array(-0.05), [], [1, 2, 4, 4])
    elif case == "per-channel under Flatten":
        model = _model(FLATTEN, np.array([0.05, 0.1]), [], [1, 32])
    elif case == "graph output":
        model = _model(MAXPOOL, np.array(0.05), [], [1, 2, 4, 4], output="d")
    elif case == "nothing to uncover":
        model = _model(MAXPOOL, np.array(0.05), [], [1, 2, 4, 4])
        model.graph.node[-1].op_type = "Add"
    else:  # the QDQ rewrite runs this island on the integers already
        model = _model(MAXPOOL, np.array(0.05), [], [1, 2, 4, 4])
        layer = model.graph.node[-1]
        layer.op_type = "QuantizeLinear"
        del layer.input[1:]
        layer.input.extend(["s", "z"])
        model.graph.output[0].type.tensor_type.elem_type = TensorProto.INT8
    assert sink_dequantize(gs.import_onnx(model)) == 0
