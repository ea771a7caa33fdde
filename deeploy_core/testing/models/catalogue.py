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


def depthwise_cnn() -> onnx.ModelProto:
    w = _weights(4)
    return _model(
        [
            helper.make_node("Conv", ["x", "c1", "cb1"], ["a"], pads=[1, 1, 1, 1], name="stem"),
            helper.make_node("Relu", ["a"], ["b"], name="stem_relu"),
            helper.make_node("Conv", ["b", "dw", "dwb"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2], group=8, name="depthwise"),
            helper.make_node("Clip", ["c", "lo", "hi"], ["d"], name="relu6"),
            helper.make_node("Conv", ["d", "pw", "pwb"], ["e"], name="pointwise"),
            # 3x3 windows: a 2x2 mean with shared input/output scales lands exactly on .5 ties, where ONNX
            # Runtime's float reference rounds either way (see test_qdq's average-pool tie test).
            helper.make_node("AveragePool", ["e"], ["f"], kernel_shape=[3, 3], strides=[3, 3], name="avgpool"),
            helper.make_node("Flatten", ["f"], ["g"], name="flatten"),
            helper.make_node("Gemm", ["g", "fc", "fcb"], ["y"], transB=1, name="classifier"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])],
        [w("c1", 8, 3, 3, 3), w("cb1", 8), w("dw", 8, 1, 3, 3), w("dwb", 8), w("pw", 6, 8, 1, 1), w("pwb", 6),
         w("fc", 5, 6 * 2 * 2), w("fcb", 5), numpy_helper.from_array(np.array(0, np.float32), "lo"),
         numpy_helper.from_array(np.array(6, np.float32), "hi")],
        "depthwise_cnn",
    )


def residual_block() -> onnx.ModelProto:
    w = _weights(5)
    return _model(
        [
            helper.make_node("Conv", ["x", "c1", "cb1"], ["a"], pads=[1, 1, 1, 1], name="conv1"),
            helper.make_node("Relu", ["a"], ["b"], name="relu1"),
            helper.make_node("Conv", ["b", "c2", "cb2"], ["c"], pads=[1, 1, 1, 1], name="conv2"),
            helper.make_node("Add", ["c", "x"], ["d"], name="skip"),
            helper.make_node("Relu", ["d"], ["e"], name="relu2"),
            helper.make_node("Mul", ["e", "gain"], ["f"], name="channel_gain"),
            helper.make_node("Concat", ["f", "x"], ["g"], axis=1, name="concat"),
            helper.make_node("GlobalAveragePool", ["g"], ["y"], name="gap"),
        ],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 1, 1])],
        [w("c1", 4, 4, 3, 3), w("cb1", 4), w("c2", 4, 4, 3, 3), w("cb2", 4), w("gain", 1, 4, 1, 1)],
        "residual_block",
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
    "depthwise_cnn": depthwise_cnn,
    "mlp": mlp,
    "residual_block": residual_block,
}


def conformance_model(name: str) -> onnx.ModelProto:
    """The catalogue model called ``name``."""
    return CONFORMANCE_MODELS[name]()
