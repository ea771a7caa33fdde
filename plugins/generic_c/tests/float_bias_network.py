"""A small CNN quantised by ONNX Runtime whose biases are then made float: the network of the float-bias tests.

Exporters such as Brevitas' dynamo QCDQ leave biases unquantised; :func:`float_bias_file` writes such a file from
ONNX Runtime's QDQ network by replacing each int32 bias behind its DequantizeLinear with a float bias off the int32
grid of ``s_x · s_w``.  The generic C plugin's ``test_float_bias`` and the cluster's ``test_float_bias_tiled`` run
the same file, so it is built here rather than in either test module.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

from plugins.generic_c.tests.random_calibration import RandomCalibration


def float_network() -> onnx.ModelProto:
    """Conv(bias) → Relu → depthwise Conv(bias) → Relu → GlobalAveragePool → Flatten → Gemm(bias)."""
    rng = np.random.default_rng(3)

    def weight(name: str, *shape: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.4).astype(np.float32), name)

    initializers = [weight("w1", 8, 3, 3, 3), weight("b1", 8), weight("w2", 8, 1, 3, 3), weight("b2", 8),
                    weight("w3", 5, 8), weight("b3", 5)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], "conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], "relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], "conv2", pads=[1, 1, 1, 1], group=8),
        helper.make_node("Relu", ["c2"], ["r2"], "relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["g"], "pool"),
        helper.make_node("Flatten", ["g"], ["f"], "flatten"),
        helper.make_node("Gemm", ["f", "w3", "b3"], ["y"], "head", transB=1),
    ]
    graph = helper.make_graph(nodes, "float_bias", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def with_float_biases(path: Path, target: Path) -> int:
    """The QDQ file with every int32 bias DequantizeLinear replaced by a float bias off its int32 grid."""
    model = onnx.load(str(path))
    constants = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    rng = np.random.default_rng(7)
    replaced: dict[str, str] = {}
    for node in list(model.graph.node):
        if node.op_type != "DequantizeLinear" or constants.get(node.input[0], np.zeros(0, np.int8)).dtype != np.int32:
            continue
        q, scale = constants[node.input[0]].astype(np.float64), constants[node.input[1]].astype(np.float64)
        off_grid = (q + rng.uniform(-0.45, 0.45, q.shape)) * scale
        name = f"{node.output[0]}_float"
        model.graph.initializer.append(numpy_helper.from_array(off_grid.astype(np.float32), name))
        replaced[node.output[0]] = name
        model.graph.node.remove(node)
    for node in model.graph.node:
        for index, name in enumerate(node.input):
            node.input[index] = replaced.get(name, name)
    onnx.save(model, str(target))
    return len(replaced)


def float_bias_file(directory: Path, per_channel: bool) -> Path:
    """:func:`float_network` quantised by ONNX Runtime, its three biases then made float (:func:`with_float_biases`)."""
    onnx.save(float_network(), directory / "float.onnx")
    quantize_static(str(directory / "float.onnx"), str(directory / "qdq.onnx"),
                    RandomCalibration([("x", np.float32, [1, 3, 10, 10])]), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=per_channel)
    assert with_float_biases(directory / "qdq.onnx", directory / "float_bias.onnx") == 3
    return directory / "float_bias.onnx"


def output_step(path: Path) -> float:
    """The scale of the graph output's quantisation: the step the distances are counted in."""
    return float(numpy_helper.to_array(next(t for t in onnx.load(str(path)).graph.initializer if t.name == "y_scale")))
