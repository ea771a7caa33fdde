"""A catalogue of small networks covering the common layer kinds (deterministic weights)."""

from __future__ import annotations

from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _model(nodes: list, inputs: list, outputs: list, initializers: list, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(model, full_check=True)
    return model


def _weights(seed: int) -> Callable[..., onnx.TensorProto]:
    rng = np.random.default_rng(seed)

    def make(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.5).astype(np.float32), name)

    return make


def mlp() -> onnx.ModelProto:
    w = _weights(1)
    return _model(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], transB=1, name="fc1"),
            helper.make_node("Relu", ["h"], ["r"], name="relu"),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["y"], transB=1, name="fc2"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [w("w1", 8, 16), w("b1", 8), w("w2", 4, 8), w("b2", 4)],
        "mlp",
    )


def cnn() -> onnx.ModelProto:
    w = _weights(2)
    return _model(
        [
            helper.make_node("Conv", ["x", "c1", "cb1"], ["a"], pads=[1, 1, 1, 1], strides=[2, 2], name="conv"),
            helper.make_node("Relu", ["a"], ["b"], name="relu"),
            helper.make_node("Conv", ["b", "dw"], ["c"], pads=[1, 1, 1, 1], group=4, name="depthwise"),
            helper.make_node("MaxPool", ["c"], ["d"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
            helper.make_node("GlobalAveragePool", ["d"], ["y"], name="gap"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 1, 1])],
        [w("c1", 4, 3, 3, 3), w("cb1", 4), w("dw", 4, 1, 3, 3)],
        "cnn",
    )


def residual_attention() -> onnx.ModelProto:
    w = _weights(3)
    scale = numpy_helper.from_array(np.ones(8, np.float32), "ln_s")
    return _model(
        [
            helper.make_node("MatMul", ["x", "wq"], ["q"], name="q"),
            helper.make_node("MatMul", ["x", "wk"], ["k"], name="k"),
            helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1], name="kt"),
            helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
            helper.make_node("Softmax", ["s"], ["p"], axis=-1, name="softmax"),
            helper.make_node("MatMul", ["p", "x"], ["o"], name="context"),
            helper.make_node("Add", ["o", "x"], ["r"], name="residual"),
            helper.make_node("LayerNormalization", ["r", "ln_s"], ["y"], axis=-1, name="norm"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 8])],
        [w("wq", 8, 8), w("wk", 8, 8), scale],
        "attention",
    )


CONFORMANCE_MODELS: dict[str, Callable[[], onnx.ModelProto]] = {
    "attention": residual_attention,
    "cnn": cnn,
    "mlp": mlp,
}


def conformance_model(name: str) -> onnx.ModelProto:
    """The catalogue model called ``name``."""
    return CONFORMANCE_MODELS[name]()
