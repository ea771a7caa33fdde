"""Fixed-point mode's Conv/MatMul/Gemm nodes (``requantization="tflite"``) take TFLite's requantiser, clamp included.

The arithmetic itself is tested with TFLite's kernels in
``deeploy_generic_c.parsing.tflite_arithmetic``'s tests; here the generated layers
must pick the TFLite binding, honour ``output_min``/``output_max``, and equal
that module's numpy model of TFLite's requantisation (FullyConnected's single rounding) on random inputs.  The
exact-mode and QOperator kernels of the same op must not claim the node.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.parsing.tflite_arithmetic import linear_multipliers, requantize

M, K, N = 4, 24, 6
SCALES = {"a": 0.04, "b": np.linspace(0.002, 0.009, N).astype(np.float32), "y": 0.11}
ZEROS = {"a": -3, "y": 5}


def _model(op: str, clamp: tuple[int, int] | None) -> tuple[onnx.ModelProto, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    weights = rng.integers(-127, 128, (K, N)).astype(np.int8)
    bias = rng.integers(-2000, 2000, N).astype(np.int32)
    constants = [numpy_helper.from_array(np.array(SCALES["a"], np.float32), "sa"),
                 numpy_helper.from_array(np.array(ZEROS["a"], np.int8), "za"),
                 numpy_helper.from_array(weights, "w"), numpy_helper.from_array(SCALES["b"], "sw"),
                 numpy_helper.from_array(np.zeros(N, np.int8), "zw"),
                 numpy_helper.from_array(np.array(SCALES["y"], np.float32), "sy"),
                 numpy_helper.from_array(np.array(ZEROS["y"], np.int8), "zy"), numpy_helper.from_array(bias, "bias")]
    attrs: dict[str, object] = {"requantization": "tflite"}
    if clamp is not None:
        attrs["output_min"], attrs["output_max"] = clamp
    if op == "QGemm":
        node = helper.make_node("QGemm", ["a", "sa", "za", "w", "sw", "zw", "bias", "sy", "zy"], ["y"],
                                domain="com.microsoft", **attrs)
    else:  # QLinearMatMul is a standard op, whose checker refuses the attribute: QGemm without C instead
        bias[:] = 0
        node = helper.make_node("QGemm", ["a", "sa", "za", "w", "sw", "zw", "", "sy", "zy"], ["y"],
                                domain="com.microsoft", **attrs)
    graph = helper.make_graph([node], "tflite", [helper.make_tensor_value_info("a", TensorProto.INT8, [M, K])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [M, N])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)])
    return model, weights, bias


@pytest.mark.parametrize("clamp", [None, (5, 60)], ids=["type-range", "relu-clamp"])
@pytest.mark.parametrize("op", ["QGemm", "QGemm-no-bias"])
def test_tflite_nodes_requantise_as_tflite_within_the_clamp(op: str, clamp: tuple[int, int] | None, tmp_path: Path,
                                                            generic_c_host: PluginHost, runtime_cache: Path) -> None:
    model, weights, bias = _model(op, clamp)
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host)
    (layer,) = generated.report["layers"]
    low, high = clamp or (-128, 127)
    assert layer["requantization"]["arithmetic"] == "tflite" and layer["requantization"]["range"] == [low, high]
    multipliers, shifts = linear_multipliers(SCALES["a"], SCALES["b"].astype(np.float64), SCALES["y"])
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    rng = np.random.default_rng(9)
    for _ in range(10):
        a = rng.integers(-128, 128, (M, K)).astype(np.int8)
        accumulator = (a.astype(np.int64) - ZEROS["a"]) @ weights.astype(np.int64) + bias
        expected = requantize(accumulator, np.asarray(multipliers), np.asarray(shifts), ZEROS["y"], low, high,
                              rounding="single")  # LiteRT's FullyConnected rounds once
        (actual,), _ = run_network(executable, generated, {"a": a}, repeats=1)
        np.testing.assert_array_equal(actual.reshape(M, N), expected)
