"""Quantised element-wise layers become 256-entry table lookups: exact mode equals ONNX Runtime on every value.

TFLite int8 models carry Logistic, Tanh, HardSwish, LeakyRelu and rescaling
QUANTIZE layers as DequantizeLinear → f → QuantizeLinear after tf2onnx.  The
lowering replaces each with ``IntegerLookup``; these tests run every one of
the 256 input values through the generated C (whole tensor, so the table is
checked entry by entry) and compare with ONNX Runtime's unfused QDQ graph
(exact mode) and with TFLite's requantisation (fixed-point mode's rescale).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.lowering.tflite_requantize import multiply_by_quantized_multiplier, quantize_multiplier
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference

CASES = [("Sigmoid", {}), ("Tanh", {}), ("HardSwish", {}), ("LeakyRelu", {"alpha": 0.1}), ("Elu", {"alpha": 1.0}),
         ("HardSigmoid", {"alpha": 0.2, "beta": 0.5}), (None, {})]


def _island(path: Path, op: str | None, attributes: dict[str, float], x_type: type, y_type: type) -> Path:
    """x (all 256 values of its type) → DQ → op → Q; TFLite's usual parameters for its int8 activations."""
    inits = [numpy_helper.from_array(np.array(0.0473, np.float32), "xs"),
             numpy_helper.from_array(np.array(-7 if x_type is np.int8 else 121, x_type), "xz"),
             numpy_helper.from_array(np.array(0.0079, np.float32), "ys"),
             numpy_helper.from_array(np.array(3 if y_type is np.int8 else 130, y_type), "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["v"])]
    if op is not None:
        nodes.append(helper.make_node(op, ["v"], ["f"], **attributes))
    nodes.append(helper.make_node("QuantizeLinear", ["f" if op else "v", "ys", "yz"], ["y"]))
    graph = helper.make_graph(
        nodes, "lookup", [helper.make_tensor_value_info("x", helper.np_dtype_to_tensor_dtype(np.dtype(x_type)), [1, 256])],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(y_type)), [1, 256])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), path)
    return path


def _every_value(dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1).astype(dtype).reshape(1, 256)


@pytest.mark.parametrize("x_type, y_type", [(np.int8, np.int8), (np.uint8, np.int8), (np.int8, np.uint8)],
                         ids=["s8-s8", "u8-s8", "s8-u8"])
@pytest.mark.parametrize("op, attributes", CASES, ids=[op or "rescale" for op, _ in CASES])
def test_exact_mode_lookup_equals_onnx_runtime_on_all_256_values(
        op: str | None, attributes: dict[str, float], x_type: type, y_type: type, tmp_path: Path,
        generic_c_host: PluginHost, runtime_cache: Path) -> None:
    model = _island(tmp_path / "island.onnx", op, attributes, x_type, y_type)
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    assert [layer["op"] for layer in generated.report["layers"]] == ["IntegerLookup"]
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    x = _every_value(x_type)
    (actual,), _ = run_network(executable, generated, {"x": x}, repeats=1)
    (expected,) = run_reference(model, {"x": x})
    assert len(np.unique(expected)) > 8, "the island must not be degenerate"
    np.testing.assert_array_equal(actual, expected)


def test_fixed_point_rescale_is_tflites_requantisation(tmp_path: Path, generic_c_host: PluginHost,
                                                       runtime_cache: Path) -> None:
    """A bare DequantizeLinear → QuantizeLinear (TFLite's QUANTIZE int8 → int8) rounds as TFLite does."""
    model = _island(tmp_path / "rescale.onnx", None, {}, np.int8, np.int8)
    options = CompileOptions(platform="generic-c", quantization="fixed-point")
    _, generated = compile_model(model, options, generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    x = _every_value(np.int8)
    (actual,), _ = run_network(executable, generated, {"x": x}, repeats=1)
    multiplier, shift = quantize_multiplier(float(np.float32(0.0473)) / float(np.float32(0.0079)))
    expected = [min(127, max(-128, multiply_by_quantized_multiplier(int(v) + 7, multiplier, shift) + 3))
                for v in x.reshape(-1)]
    np.testing.assert_array_equal(actual.reshape(-1), expected)
    (onnx_runtime,) = run_reference(model, {"x": x})
    assert np.abs(actual.astype(int) - onnx_runtime.astype(int)).max() <= 1


def test_tflite_requantisation_rounds_twice() -> None:
    """TFLite's two roundings, checked on values where a single rounding would differ."""
    assert quantize_multiplier(0.5) == (2**30, 0)
    assert quantize_multiplier(1.0) == (2**30, 1)
    multiplier, shift = quantize_multiplier(0.75)
    assert multiply_by_quantized_multiplier(3, multiplier, shift) == 2  # 2.25
    assert multiply_by_quantized_multiplier(-2, *quantize_multiplier(0.75)) == -1  # -1.5: the high multiply rounds up
    assert multiply_by_quantized_multiplier(1, *quantize_multiplier(0.25)) == 1  # 0.25 → 0.5 (high multiply) → 1
    assert multiply_by_quantized_multiplier(3, *quantize_multiplier(0.125)) == 1  # 0.375 → 1.5/4 → 2/4 → 1
    assert multiply_by_quantized_multiplier(5, *quantize_multiplier(0.125)) == 1  # 0.625 → 2.5/4 → 3/4 → 1
    assert multiply_by_quantized_multiplier(-4, *quantize_multiplier(0.125)) == -1  # -0.5: the shift rounds away
    assert multiply_by_quantized_multiplier(4, *quantize_multiplier(0.125)) == 1  # 0.5
