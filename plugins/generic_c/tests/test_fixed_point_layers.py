"""The per-layer bounds, checked layer by layer on a residual network (deeploy_core.testing.layerwise).

With an Add inside a residual block and an average pool before the last
convolution, a step of difference from one layer can grow through the layers
after it, so in fixed-point mode the outputs of this network have no bound
against ONNX Runtime.  What holds is per layer, given ONNX Runtime's own
values of its inputs: in fixed-point mode (TFLite's arithmetic: a 31-bit
multiplier and two roundings in a convolution, against ONNX Runtime's
float32 rounding) every
requantising layer, convolutions included, is within one step; in exact mode
every layer is bit exact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.layerwise import check_layers, quantised_layers

SHAPE = (1, 3, 16, 16)


def _residual_network() -> onnx.ModelProto:
    """conv → relu → (conv → relu → conv) + skip → relu → 2×2 average pool → 1×1 conv → global average pool."""
    rng = np.random.default_rng(5)
    weights, nodes = [], []

    def conv(name: str, source: str, channels_in: int, channels_out: int, kernel: int) -> str:
        shape = (channels_out, channels_in, kernel, kernel)
        weights.append(numpy_helper.from_array(
            (rng.standard_normal(shape) * np.sqrt(2.0 / (channels_in * kernel * kernel))).astype(np.float32), f"{name}_w"))
        weights.append(numpy_helper.from_array((rng.standard_normal(channels_out) * 0.1).astype(np.float32), f"{name}_b"))
        nodes.append(helper.make_node("Conv", [source, f"{name}_w", f"{name}_b"], [name], kernel_shape=[kernel] * 2,
                                      pads=[kernel // 2] * 4))
        return name

    def relu(source: str) -> str:
        nodes.append(helper.make_node("Relu", [source], [f"{source}_relu"]))
        return f"{source}_relu"

    stem = relu(conv("stem", "x", 3, 16, 3))
    branch = conv("second", relu(conv("first", stem, 16, 16, 3)), 16, 16, 3)
    nodes.append(helper.make_node("Add", [branch, stem], ["sum"]))
    nodes.append(helper.make_node("AveragePool", [relu("sum")], ["pooled"], kernel_shape=[2, 2], strides=[2, 2]))
    nodes.append(helper.make_node("GlobalAveragePool", [conv("classifier", "pooled", 16, 10, 1)], ["global"]))
    nodes.append(helper.make_node("Flatten", ["global"], ["y"]))
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class _Calibration(CalibrationDataReader):
    def __init__(self) -> None:
        self.batches = iter([{"x": np.random.default_rng(index).standard_normal(SHAPE).astype(np.float32)}
                             for index in range(8)])

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def _quantised(folder: Path) -> Path:
    source, model = folder / "residual.onnx", folder / "residual_qdq.onnx"
    onnx.save(_residual_network(), source)
    quantize_static(str(source), str(model), _Calibration(), quant_format=QuantFormat.QDQ, per_channel=False,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    assert len(quantised_layers(onnx.load(model))) >= 8
    return model


def _samples() -> list[dict[str, np.ndarray]]:
    return [{"x": np.random.default_rng(1000 + seed).standard_normal(SHAPE).astype(np.float32)} for seed in range(10)]


REQUANTISING = ("QLinearConv", "QLinearAdd", "QLinearAveragePool", "QLinearGlobalAveragePool")


def test_fixed_point_every_layer_of_a_residual_network_is_within_one_step_given_onnx_runtime_inputs(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = _quantised(tmp_path)
    checks = check_layers(model, CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host,
                          _samples(), tmp_path / "layers", runtime_cache)
    by_op = {op: [check for check in checks if op in check.ops] for op in REQUANTISING}
    assert len(by_op["QLinearConv"]) == 4 and all(check.arithmetic == ("tflite",) for check in by_op["QLinearConv"])
    assert len(by_op["QLinearAdd"]) == 1 and by_op["QLinearAdd"][0].arithmetic == ("tflite",)
    assert all(len(found) == 1 for op, found in by_op.items() if op != "QLinearConv"), by_op
    assert all(check.bound == 1 for found in by_op.values() for check in found)
    failing = [(check.layer.output, check.ops, check.arithmetic, check.error, check.bound)
               for check in checks if not check.ok]
    assert not failing, failing


def test_exact_mode_every_layer_of_a_residual_network_is_bit_exact_given_onnx_runtime_inputs(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = _quantised(tmp_path)
    checks = check_layers(model, CompileOptions(platform="generic-c"), generic_c_host, _samples(),
                          tmp_path / "layers", runtime_cache)
    requantising = [check for check in checks if set(check.ops) & set(REQUANTISING)]
    assert len(requantising) == 7 and all(check.arithmetic == ("float32",) for check in requantising), requantising
    failing = [(check.layer.output, check.ops, check.error, check.bound) for check in checks
               if check.bound != 0 or check.error != 0]
    assert not failing, failing
