"""Standard QDQ int8 models from ONNX Runtime's quantizer: exact mode is bit-exact with ONNX Runtime.

Exact mode keeps the QDQ structure: DequantizeLinear and QuantizeLinear run
with ONNX Runtime's arithmetic, the ops between them in float32, so the
integer tensors and every output equal the reference (graph optimisations off).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.models import CONFORMANCE_MODELS
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.data import graph_input_specs
from deeploy_core.validate.reference import run_reference


FIXED_POINT_OPS = {"QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearAveragePool",
                   "QLinearGlobalAveragePool"}
FLOAT_COMPUTE = {"Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool", "MaxPool"}
"""Ops the fixed-point mode must not leave in float (Softmax and LayerNormalization may fall back)."""


class RandomCalibration(CalibrationDataReader):
    def __init__(self, specs: list, count: int = 8) -> None:
        rng = np.random.default_rng(0)
        self.batches = iter(
            [{name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs} for _ in range(count)]
        )

    def get_next(self) -> dict | None:
        return next(self.batches, None)


def quantized(model: onnx.ModelProto, directory: Path, per_channel: bool) -> Path:
    source, target = directory / "float.onnx", directory / "qdq.onnx"
    onnx.save(model, source)
    quantize_static(str(source), str(target), RandomCalibration(graph_input_specs(model)), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=per_channel)
    return target


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("name", sorted(CONFORMANCE_MODELS))
def test_qdq_model_is_bit_exact_with_onnx_runtime_on_20_inputs(
    name: str, per_channel: bool, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model_path = quantized(CONFORMANCE_MODELS[name](), tmp_path, per_channel)
    ops = {node.op_type for node in onnx.load(model_path).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    _, generated = compile_model(model_path, CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    specs = graph_input_specs(onnx.load(model_path))
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs}
        actual, _ = run_network(executable, generated, inputs, repeats=1)
        comparisons = compare_outputs(generated, actual, run_reference(model_path, inputs), atol=0.0, rtol=0.0)
        assert all(c.ok for c in comparisons), (seed, [(c.name, c.max_abs_error, c.mismatches) for c in comparisons])


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("name", sorted(CONFORMANCE_MODELS))
def test_fixed_point_mode_is_within_one_lsb_of_onnx_runtime_on_20_inputs(
    name: str, per_channel: bool, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model_path = quantized(CONFORMANCE_MODELS[name](), tmp_path, per_channel)
    options = CompileOptions(platform="generic-c", quantization="fixed-point")
    deployer, generated = compile_model(model_path, options, generic_c_host)
    integer_layers = [layer for layer in generated.report["layers"] if layer["op"] in FIXED_POINT_OPS]
    assert integer_layers, "the fixed-point lowering rewrote no layer"
    assert all(layer["requantization"]["shift"] for layer in integer_layers)
    float_compute = [layer["op"] for layer in generated.report["layers"]
                     if layer["op"] in FLOAT_COMPUTE and layer["outputs"][0]["dtype"] == "float32"]
    assert not float_compute, f"compute layers left in float: {float_compute}"
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    specs = graph_input_specs(onnx.load(model_path))
    worst = 0.0
    for seed in range(20):
        rng = np.random.default_rng(1000 + seed)
        inputs = {name: rng.standard_normal(shape).astype(np.float32) for name, _, shape in specs}
        actual, _ = run_network(executable, generated, inputs, repeats=1)
        comparisons = compare_outputs(generated, actual, run_reference(model_path, inputs), 0.0, 0.0, lsb_tolerance=1.0)
        assert all(c.step for c in comparisons)
        worst = max([worst, *(c.max_lsb_error or 0.0 for c in comparisons)])
        assert all(c.ok for c in comparisons), (seed, [(c.name, c.max_lsb_error, c.mismatches) for c in comparisons])
    print(f"{name} ({'per-channel' if per_channel else 'per-tensor'}): worst error {worst:.0f} LSB, "
          f"{len(integer_layers)} fixed-point layers")


def test_fixed_point_average_pool_rounds_exact_ties_half_to_even(tmp_path: Path, generic_c_host: PluginHost,
                                                                 runtime_cache: Path) -> None:
    """A 2x2 mean with one scale in and out hits .5 exactly; QDQ semantics round it half to even.

    (ONNX Runtime's float reference rounds such ties either way, depending on
    float error, which is why the catalogue's depthwise model pools 3x3.)
    """
    scale, zero = numpy_helper.from_array(np.array(0.05, np.float32), "s"), numpy_helper.from_array(np.array(3, np.int8), "z")
    graph = helper.make_graph(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
         helper.make_node("AveragePool", ["xf"], ["yf"], kernel_shape=[2, 2], strides=[2, 2]),
         helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"])],
        "pool", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 2, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 4, 4])], [scale, zero])
    path = tmp_path / "pool.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host)
    assert [layer["op"] for layer in generated.report["layers"]] == ["QLinearAveragePool"]
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    x = np.random.default_rng(7).integers(-128, 128, (1, 2, 8, 8)).astype(np.int8)
    (actual,), _ = run_network(executable, generated, {"x": x}, repeats=1)
    sums = (x.astype(np.int64) - 3).reshape(1, 2, 4, 2, 4, 2).sum(axis=(3, 5))
    expected = np.clip(np.round(sums / 4) + 3, -128, 127).astype(np.int8)  # numpy rounds half to even
    assert np.any(sums % 4 == 2), "the data must contain exact ties"
    np.testing.assert_array_equal(actual, expected)


def test_cli_fixed_point_validate_reports_lsb_and_analyze_shows_requantisation(tmp_path: Path) -> None:
    model_path = quantized(CONFORMANCE_MODELS["cnn"](), tmp_path, per_channel=True)
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "200"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "deeploy_core", *args, str(model_path)], capture_output=True,
                              text=True, env=env)

    validated = cli("validate", "--quantization", "fixed-point")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "max LSB" in validated.stdout and "ok" in validated.stdout
    analyzed = cli("analyze", "--quantization", "fixed-point", "--json")
    layers = json.loads(analyzed.stdout)["layers"]
    conv = next(layer for layer in layers if layer["op"] == "QLinearConv")
    # The float32 scale's 24-bit significand: the layer rounds as ONNX Runtime's float32 requantisation does.
    assert conv["requantization"]["rounding"] == "float32"
    assert len(conv["requantization"]["multiplier"]) == 4 and all(2**23 <= m < 2**24 for m in conv["requantization"]["multiplier"])
    exact = json.loads(cli("analyze", "--json").stdout)["layers"]
    quantize = next(layer for layer in exact if layer["op"] == "QuantizeLinear")
    assert quantize["requantization"]["scale"] > 0 and quantize["requantization"]["range"] == [-128, 127]
    table = cli("analyze", "--quantization", "fixed-point")
    assert ">>" in table.stdout, table.stdout
