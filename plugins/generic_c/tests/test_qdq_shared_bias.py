"""QDQ exact mode fuses convolutions whose zero bias the exporter shared between layers.

torchvision initialises SqueezeNet's biases to zero and the TorchScript exporter
keeps one zero initializer for all of them, reused through ``Identity`` nodes;
ONNX Runtime's ``quantize_static`` then quantises that bias once, with the first
layer's scale, and the other layers read it through the Identity nodes.  Both used to keep 18 of SqueezeNet
1.1's 26 convolutions in float, their weights dequantised into the arena
(2.77 MB against 127 kB for the float model).  A zero bias is zero at any
scale, and Identity nodes are removed first (as ONNX Runtime does).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost

SHAPE = (1, 3, 12, 12)


class _Calibration(CalibrationDataReader):
    def __init__(self) -> None:
        rng = np.random.default_rng(3)
        self.batches = iter([{"x": rng.standard_normal(SHAPE).astype(np.float32)} for _ in range(4)])

    def get_next(self) -> dict | None:
        return next(self.batches, None)


def _shared_zero_bias_network(path: Path) -> Path:
    """Three 3×3 convolutions with different weight scales, all reading one zero bias (two through Identity)."""
    rng = np.random.default_rng(11)
    weights = [numpy_helper.from_array(np.zeros(8, np.float32), "zero_bias")]
    nodes, source, channels = [], "x", 3
    for index, gain in enumerate((0.5, 2.0, 8.0)):
        weights.append(numpy_helper.from_array((rng.standard_normal((8, channels, 3, 3)) * gain / channels).astype(np.float32),
                                               f"w{index}"))
        bias = "zero_bias"
        if index:  # as the TorchScript exporter writes a deduplicated initializer used again
            bias = f"zero_bias_{index}"
            nodes.append(helper.make_node("Identity", ["zero_bias"], [bias], name=f"Identity_{index}"))
        nodes.append(helper.make_node("Conv", [source, f"w{index}", bias], [f"c{index}"], name=f"conv{index}",
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
        nodes.append(helper.make_node("Relu", [f"c{index}"], [f"r{index}"], name=f"relu{index}"))
        source, channels = f"r{index}", 8
    graph = helper.make_graph(nodes, "shared_bias", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              [helper.make_tensor_value_info(source, TensorProto.FLOAT, [1, 8, 12, 12])], weights)
    float_path = path.with_name("float.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), float_path)
    quantize_static(str(float_path), str(path), _Calibration(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=False)
    return path


def test_convolutions_sharing_a_zero_bias_are_fused_and_exact(tmp_path: Path, generic_c_host: PluginHost,
                                                              runtime_cache: Path) -> None:
    model = _shared_zero_bias_network(tmp_path / "qdq.onnx")
    ops = [node.op_type for node in onnx.load(model).graph.node]
    assert ops.count("Identity") == 2, "the quantised bias reaches two convolutions through Identity (the case)"
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    fused = [layer["node"] for layer in generated.report["layers"] if layer["op"] == "QLinearConv"]
    assert len(fused) == 3, [layer["op"] for layer in generated.report["layers"]]
    _, float_network = compile_model(tmp_path / "float.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    assert generated.report["memory"]["arena_bytes"] < float_network.report["memory"]["arena_bytes"]
    inputs = {"x": np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32)}
    _, result = validate_with_data(model, CompileOptions(platform="generic-c"), generic_c_host, inputs, atol=0.0,
                                   rtol=0.0, cache_dir=runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error, c.mismatches) for c in result.comparisons]
