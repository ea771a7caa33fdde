"""Standard QDQ int8 models from ONNX Runtime's quantizer: exact mode is bit-exact with ONNX Runtime.

Exact mode fuses each quantised island into an integer kernel that computes
what ONNX Runtime computes (int32 accumulation requantised in float32 for
Conv/MatMul/Gemm, ONNX Runtime's float arithmetic inside the kernel for the
others), so the integer tensors and every output equal the reference.
Fixed-point mode computes TFLite's reference int8 arithmetic instead: against
ONNX Runtime it is held per layer, within one step given the same inputs.
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
from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.layerwise import check_layers
from deeploy_core.testing.models import CONFORMANCE_MODELS
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.data import graph_input_specs
from deeploy_core.validate.reference import run_reference
from plugins.generic_c.tests.random_calibration import RandomCalibration


FIXED_POINT_OPS = {"QLinearConv", "QLinearMatMul", "QGemm", "QLinearAdd", "QLinearMul", "QLinearAveragePool",
                   "QLinearGlobalAveragePool"}
FLOAT_COMPUTE = {"Conv", "Gemm", "MatMul", "Add", "Mul", "AveragePool", "GlobalAveragePool", "MaxPool"}
"""Ops the fixed-point mode must not leave in float (Softmax and LayerNormalization may fall back)."""


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


@pytest.mark.parametrize("name, per_channel", [
    pytest.param(name, per_channel, id=f"{name}-{'per-channel' if per_channel else 'per-tensor'}",
                 marks=[] if name in ("residual_block", "depthwise_cnn") else [pytest.mark.heavy_model])
    for name in sorted(CONFORMANCE_MODELS) for per_channel in (False, True)])
def test_fixed_point_mode_is_integer_and_each_layer_within_one_step_of_onnx_runtime(
    name: str, per_channel: bool, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    """Fixed-point mode computes TFLite's integer arithmetic, so against ONNX Runtime only the per-layer bound holds.

    Every requantising layer rounds with a 31-bit multiplier (twice in
    convolutions) where ONNX Runtime rounds in float32: given ONNX Runtime's inputs it lands within one
    step, and a step that enters the next layer can grow, so the network's
    outputs are not held to any bound here (LiteRT is their reference, in the
    quant tests).  Each layer is compiled alone and fed ONNX Runtime's values.
    """
    model_path = quantized(CONFORMANCE_MODELS[name](), tmp_path, per_channel)
    options = CompileOptions(platform="generic-c", quantization="fixed-point")
    _, generated = compile_model(model_path, options, generic_c_host)
    integer_layers = [layer for layer in generated.report["layers"] if layer["op"] in FIXED_POINT_OPS]
    assert integer_layers, "the fixed-point lowering rewrote no layer"
    # Conv/MatMul/Gemm/Add/Mul have TFLite kernels for every parameter; an average pool that rescales has none
    # and keeps the 31-bit integer kernel (no "arithmetic").
    not_tflite = [layer["op"] for layer in integer_layers
                  if (layer["requantization"] or {}).get("arithmetic") != "tflite"
                  and layer["op"] not in ("QLinearAveragePool", "QLinearGlobalAveragePool")]
    assert not not_tflite, f"layers not in TFLite's arithmetic: {not_tflite}"
    float_compute = [layer["op"] for layer in generated.report["layers"]
                     if layer["op"] in FLOAT_COMPUTE and layer["outputs"][0]["dtype"] == "float32"]
    assert not float_compute, f"compute layers left in float: {float_compute}"
    specs = graph_input_specs(onnx.load(model_path))
    samples = [{name: np.random.default_rng(1000 + seed).standard_normal(shape).astype(np.float32)
                for name, _, shape in specs} for seed in range(5)]
    checks = check_layers(model_path, options, generic_c_host, samples, tmp_path / "layers", runtime_cache)
    requantising = [check for check in checks if any(op in FIXED_POINT_OPS for op in check.ops)]
    assert len(requantising) == len(integer_layers), "every integer layer of the network is checked alone"
    assert all(check.bound == 1 for check in requantising)  # TFLite's and the 31-bit kernels round on their own
    failing = [(check.layer.output, check.ops, check.arithmetic, check.error, check.bound)
               for check in checks if not check.ok]
    assert not failing, failing
    print(f"{name} ({'per-channel' if per_channel else 'per-tensor'}): {len(checks)} layers, largest error "
          f"{max(check.error for check in checks)} step(s)")


def _pool_model(path: Path, nodes: list[onnx.NodeProto], domains: tuple[str, ...] = ()) -> Path:
    """int8 x [1, 2, 8, 8] -> 2x2/2 average pool -> int8 y [1, 2, 4, 4], scale 0.05 and zero point 3 in and out."""
    parameters = [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
                  numpy_helper.from_array(np.array(3, np.int8), "z")]
    graph = helper.make_graph(nodes, "pool", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 2, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 4, 4])], parameters)
    opsets = [helper.make_opsetid("", 21), *(helper.make_opsetid(domain, 1) for domain in domains)]
    onnx.save(helper.make_model(graph, opset_imports=opsets), path)
    return path


def _pool_input() -> tuple[np.ndarray, np.ndarray]:
    """Seeded int8 data and its raw 2x2 window sums."""
    x = np.random.default_rng(7).integers(-128, 128, (1, 2, 8, 8)).astype(np.int8)
    return x, x.astype(np.int64).reshape(1, 2, 4, 2, 4, 2).sum(axis=(3, 5))


def _run_pool(path: Path, options: CompileOptions, host: PluginHost, folder: Path,
              cache: Path) -> tuple[dict, np.ndarray]:
    _, generated = compile_model(path, options, host)
    executable = build_executable(generated, folder, Toolchain.from_environment(), cache)
    (actual,), _ = run_network(executable, generated, {"x": _pool_input()[0]}, repeats=1)
    return generated.report, actual


def test_fixed_point_average_pool_rounds_the_raw_sum_half_away_from_zero_as_tflite(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    """TFLite's int8 average pool keeps its input's scale and zero point, sums the raw values and divides rounding
    half away from zero.  A 2x2 mean hits .5 exactly; the data has ties where that differs from QDQ semantics (the
    mean of ``x - z`` rounded half to even, plus ``z``) and ties on both sides of zero."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xf"]),
             helper.make_node("AveragePool", ["xf"], ["yf"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("QuantizeLinear", ["yf", "s", "z"], ["y"])]
    path = _pool_model(tmp_path / "pool.onnx", nodes)
    report, actual = _run_pool(path, CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host,
                               tmp_path / "build", runtime_cache)
    (layer,) = report["layers"]
    assert layer["op"] == "QLinearAveragePool" and layer["requantization"]["arithmetic"] == "tflite"
    _, sums = _pool_input()
    magnitude = (np.abs(sums) + 2) // 4  # |sum| / 4 rounded half up, then the sign back: half away from zero
    expected = np.clip(np.sign(sums) * magnitude, -128, 127).astype(np.int8)
    qdq_semantics = np.clip(np.round((sums - 12) / 4) + 3, -128, 127).astype(np.int8)  # numpy: half to even
    ties = sums % 4 == 2
    assert np.any(ties & (sums > 0)) and np.any(ties & (sums < 0)), "the data must contain ties of both signs"
    assert np.any(expected != qdq_semantics), "the data must tell TFLite's rounding from QDQ semantics"
    np.testing.assert_array_equal(actual, expected)


def test_qoperator_average_pool_rounds_exact_ties_half_to_even(tmp_path: Path, generic_c_host: PluginHost,
                                                               runtime_cache: Path) -> None:
    """A QOperator file's com.microsoft QLinearAveragePool (no requantization attribute) keeps the integer kernel
    that rounds the exact mean of ``x - z`` half to even, as QuantizeLinear would, in either mode.

    (ONNX Runtime's float reference rounds such ties either way, depending on
    float error, which is why the catalogue's depthwise model pools 3x3.)
    """
    node = helper.make_node("QLinearAveragePool", ["x", "s", "z", "s", "z"], ["y"], domain="com.microsoft",
                            kernel_shape=[2, 2], strides=[2, 2])
    path = _pool_model(tmp_path / "qoperator_pool.onnx", [node], ("com.microsoft",))
    _, sums = _pool_input()
    expected = np.clip(np.round((sums - 12) / 4) + 3, -128, 127).astype(np.int8)  # numpy rounds half to even
    assert np.any(sums % 4 == 2), "the data must contain exact ties"
    for mode in ("exact", "fixed-point"):
        report, actual = _run_pool(path, CompileOptions(platform="generic-c", quantization=mode), generic_c_host,
                                   tmp_path / f"build_{mode}", runtime_cache)
        (layer,) = report["layers"]
        assert layer["op"] == "QLinearAveragePool" and "arithmetic" not in layer["requantization"], layer
        np.testing.assert_array_equal(actual, expected, err_msg=mode)


def _single_conv() -> onnx.ModelProto:
    """x [1, 3, 8, 8] -> 3x3 Conv (4 channels) -> Relu -> y: quantised, one requantising layer between x and y."""
    rng = np.random.default_rng(3)
    weights = [numpy_helper.from_array((rng.standard_normal((4, 3, 3, 3)) * 0.3).astype(np.float32), "w"),
               numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "b")]
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "single_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_cli_fixed_point_validate_reports_lsb_and_analyze_shows_requantisation(tmp_path: Path) -> None:
    """validate's default verdict in fixed-point mode is one step of ONNX Runtime, which the output of one
    requantising layer meets by construction (a deeper output need not); analyze shows TFLite's parameters."""
    model_path = quantized(_single_conv(), tmp_path, per_channel=True)
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "200"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "deeploy_core", *args, str(model_path)], capture_output=True,
                              text=True, env=env)

    validated = cli("validate", "--quantization", "fixed-point")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "max LSB" in validated.stdout and "<= 1 LSB" in validated.stdout and "ok" in validated.stdout
    analyzed = cli("analyze", "--quantization", "fixed-point", "--json")
    layers = json.loads(analyzed.stdout)["layers"]
    conv = next(layer for layer in layers if layer["op"] == "QLinearConv")
    # TFLite's parameters: per output channel a 31-bit multiplier m in [2^30, 2^31) and a shift (positive: left)
    # with m * 2^(shift - 31) the effective scale s_x * s_w[c] / s_y to 31 significant bits.
    requant = conv["requantization"]
    assert requant["arithmetic"] == "tflite" and requant["range"] == [-128, 127]
    assert len(requant["multiplier"]) == len(requant["shift"]) == 4
    assert all(2**30 <= m < 2**31 for m in requant["multiplier"])
    scales = _conv_scales(onnx.load(model_path), conv["node"])
    for m, shift, scale in zip(requant["multiplier"], requant["shift"], scales):
        assert abs(m * 2.0 ** (shift - 31) / scale - 1) <= 2.0**-30, (m, shift, scale)
    exact = json.loads(cli("analyze", "--json").stdout)["layers"]
    assert next(layer for layer in exact if layer["op"] == "QLinearConv")["requantization"]["arithmetic"] == "float32"
    quantize = next(layer for layer in exact if layer["op"] == "QuantizeLinear")
    assert quantize["requantization"]["scale"] > 0 and quantize["requantization"]["range"] == [-128, 127]
    table = cli("analyze", "--quantization", "fixed-point")
    assert table.returncode == 0 and "QLinearConv" in table.stdout, table.stdout + table.stderr


def _conv_scales(model: onnx.ModelProto, fused_node: str) -> list[float]:
    """s_x * s_w[c] / s_y in double of the QDQ Conv the fused node came from (``<conv name>_integer``)."""
    values = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    producers = {output: node for node in model.graph.node for output in node.output}
    consumers = {name: node for node in model.graph.node for name in node.input}
    conv = next(node for node in model.graph.node if node.op_type == "Conv" and f"{node.name}_integer" == fused_node)
    x_scale = values[producers[conv.input[0]].input[1]]
    w_scales = values[producers[conv.input[1]].input[1]].reshape(-1)
    output = conv.output[0]
    while consumers[output].op_type != "QuantizeLinear":  # a Relu between the Conv and its QuantizeLinear
        output = consumers[output].output[0]
    y_scale = values[consumers[output].input[1]]
    return [float(x_scale) * float(w) / float(y_scale) for w in w_scales]
