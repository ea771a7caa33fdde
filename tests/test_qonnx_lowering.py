"""QONNX's Quant/Trunc/BipolarQuant and Brevitas' QCDQ weight chains, lowered to standard ONNX exactly.

Graphs are built with ``onnx.helper`` (no brevitas or qonnx needed).  The
reference is this file's own numpy reading of QONNX's definitions (scale,
add the zero point, clamp to the bit width's range, round with the mode,
subtract the zero point, rescale — in float32), written independently of
:mod:`deeploy_core.lowering.qonnx_arithmetic`: every rounding mode decides
ties explicitly.  Each lowered graph runs on ONNX Runtime and must equal the
reference bit for bit, on grids that include exact ties, saturation and both
ends of every range; a small network is also compiled, built and run on
generic-c and pulp-cluster against ONNX Runtime on the lowered graph.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.lowering.qcdq_constants import fold_qcdq_constants
from deeploy_core.lowering.qonnx import QonnxLoweringError, lower_qonnx
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin

QONNX = "qonnx.custom_op.general"
MODES = ("ROUND", "HALF_EVEN", "CEIL", "FLOOR", "UP", "DOWN", "HALF_UP", "HALF_DOWN")


# -- the reference ---------------------------------------------------------------------------------------------------

def _round_one(value: float, mode: str) -> float:
    """One value rounded as QONNX's mode says, ties decided explicitly."""
    floor, ceil = math.floor(value), math.ceil(value)
    if mode == "FLOOR":
        return floor
    if mode == "CEIL":
        return ceil
    if mode == "DOWN":  # toward zero
        return floor if value >= 0 else ceil
    if mode == "UP":  # away from zero
        return ceil if value >= 0 else floor
    if value - floor != 0.5:
        return floor if value - floor < 0.5 else ceil
    if mode in ("ROUND", "HALF_EVEN"):
        return floor if floor % 2 == 0 else ceil
    if mode == "HALF_UP":  # ties away from zero
        return ceil if value > 0 else floor
    assert mode == "HALF_DOWN"  # ties toward zero
    return floor if value > 0 else ceil


def _round(values: np.ndarray, mode: str) -> np.ndarray:
    return np.vectorize(lambda v: _round_one(float(v), mode), otypes=[np.float64])(values)


def _limits(bits: int, signed: bool, narrow: bool) -> tuple[int, int]:
    if signed:
        return -(2 ** (bits - 1)) + (1 if narrow else 0), 2 ** (bits - 1) - 1
    return 0, 2**bits - 1 - (1 if narrow else 0)


def reference_quant(x: np.ndarray, scale: np.ndarray, zero: np.ndarray, bits: int, signed: bool, narrow: bool,
                    mode: str) -> np.ndarray:
    """QONNX Quant: float32 scaling, clamp, rounding, float32 rescaling."""
    scaled = (x.astype(np.float32) / scale.astype(np.float32) + zero.astype(np.float32)).astype(np.float64)
    low, high = _limits(bits, signed, narrow)
    integers = _round(np.clip(scaled, low, high), mode).astype(np.float32)
    return (integers - zero.astype(np.float32)) * scale.astype(np.float32)


def reference_trunc(x: np.ndarray, scale: float, zero: float, output_scale: float, output_bits: int, signed: bool,
                    narrow: bool, mode: str) -> np.ndarray:
    """QONNX Trunc (version 2): integer sum, shift by the power of two between the scales, clamp, round, rescale."""
    sums = _round((x.astype(np.float32) / np.float32(scale) + np.float32(zero)).astype(np.float64), "ROUND")
    shift = 2.0 ** round(math.log2(output_scale / scale))
    low, high = _limits(output_bits, signed, narrow)
    rounded = _round(np.clip(sums / shift, low, high), mode).astype(np.float32)
    return (rounded - np.float32(zero / shift)) * np.float32(output_scale)


# -- graphs ----------------------------------------------------------------------------------------------------------

def _f32(name: str, values: object) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def _model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
           initializers: list[onnx.TensorProto]) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "qonnx", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(QONNX, 2)])


def _quant(name: str, source: str, output: str, bits: int, signed: bool, narrow: bool, mode: str,
           scale: np.ndarray, zero: np.ndarray) -> tuple[onnx.NodeProto, list[onnx.TensorProto]]:
    node = helper.make_node("Quant", [source, f"{name}_s", f"{name}_z", f"{name}_b"], [output], name=name,
                            domain=QONNX, signed=int(signed), narrow=int(narrow), rounding_mode=mode)
    return node, [_f32(f"{name}_s", scale), _f32(f"{name}_z", zero), _f32(f"{name}_b", bits)]


def lowered(model: onnx.ModelProto) -> onnx.ModelProto:
    graph = gs.import_onnx(model)
    lower_qonnx(graph)
    fold_qcdq_constants(graph)
    result = gs.export_onnx(graph)
    kept = [opset for opset in result.opset_import if opset.domain != QONNX]
    del result.opset_import[:]
    result.opset_import.extend(kept)
    return result


def run(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def ops(model: onnx.ModelProto) -> list[str]:
    return [node.op_type for node in model.graph.node]


def stored_integers(model: onnx.ModelProto) -> np.ndarray:
    """The constant the first node (the folded DequantizeLinear) reads."""
    name = model.graph.node[0].input[0]
    return numpy_helper.to_array(next(tensor for tensor in model.graph.initializer if tensor.name == name))


# -- Quant on constants ----------------------------------------------------------------------------------------------

WEIGHT_CASES = [(bits, signed, narrow) for bits in range(2, 9) for signed in (True, False) for narrow in (False, True)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_quant_on_weights_folds_to_integers(mode: str, per_channel: bool) -> None:
    rng = np.random.default_rng(3)
    for bits, signed, narrow in WEIGHT_CASES:
        low, high = _limits(bits, signed, narrow)
        scale = (rng.uniform(0.01, 0.1, (4, 1, 1, 1)) if per_channel else np.array(0.0625)).astype(np.float32)
        zero = np.array(0.0 if signed else float(rng.integers(0, 2 ** (bits - 1))), np.float32)
        # every half step across the range and beyond it: ties, both ends, saturation
        steps = np.arange(2 * (low - 3), 2 * (high + 3) + 1) / 2.0
        weights = np.resize(steps, (4, 3, 2, (steps.size + 23) // 24)).astype(np.float32)
        weights = ((weights - zero) * scale).astype(np.float32)
        weights[0, 0, 0, 0] = np.float32(-0.0)
        node, constants = _quant("q", "w", "y", bits, signed, narrow, mode, scale, zero)
        model = _model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, weights.shape)],
                       [_f32("w", weights), *constants])
        result = lowered(model)
        case = f"{bits} bits signed={signed} narrow={narrow}"
        assert ops(result) == ["DequantizeLinear"], case
        stored = stored_integers(result)
        assert stored.dtype == (np.int8 if signed or high <= 127 else np.uint8), case
        assert stored.min() >= low and stored.max() <= high, case
        expected = reference_quant(weights, scale, zero, bits, signed, narrow, mode)
        np.testing.assert_array_equal(run(result, {})[0], expected, err_msg=case)


def test_quant_on_a_bias_folds_to_int32() -> None:
    bias = np.array([-1e4, -3.5, -2.5, 0.0, 2.5, 1e4, 5e6], np.float32)
    scale = np.full(7, 1e-3, np.float32)
    node, constants = _quant("b", "bias", "y", 32, True, False, "ROUND", scale, np.array(0.0))
    result = lowered(_model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])],
                            [_f32("bias", bias), *constants]))
    stored = stored_integers(result)
    assert stored.dtype == np.int32
    expected = reference_quant(bias, scale, np.zeros(7), 32, True, False, "ROUND")
    np.testing.assert_array_equal(run(result, {})[0], expected)


def test_bipolar_weights_fold_to_plus_minus_one() -> None:
    weights = np.array([[-0.3, 0.0, -0.0, 2.0], [1e-9, -1e-9, 5.0, -5.0]], np.float32)
    scale = np.array([[0.5], [0.25]], np.float32)
    node = helper.make_node("BipolarQuant", ["w", "s"], ["y"], name="bipolar", domain=QONNX)
    result = lowered(_model([node], [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
                            [_f32("w", weights), _f32("s", scale)]))
    assert ops(result) == ["DequantizeLinear"]
    stored = stored_integers(result)
    assert stored.dtype == np.int8 and set(stored.reshape(-1).tolist()) == {-1, 1}
    np.testing.assert_array_equal(run(result, {})[0], np.where(weights >= 0, 1.0, -1.0).astype(np.float32) * scale)


# -- Quant on activations --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("bits, signed, narrow", WEIGHT_CASES, ids=lambda value: str(value))
def test_quant_on_activations_becomes_quantize_dequantize(bits: int, signed: bool, narrow: bool) -> None:
    low, high = _limits(bits, signed, narrow)
    for scale, zero in ((np.array(0.125, np.float32), np.array(0.0 if signed else 1.0, np.float32)),
                        (np.array([0.037, 0.011, 0.2], np.float32).reshape(1, 3, 1), np.array(0.0, np.float32))):
        halves = np.arange(2 * (low - 4), 2 * (high + 4) + 1, dtype=np.float32) / 2
        x = ((halves[None, None, :] - zero) * scale).astype(np.float32) * np.ones((1, 3, 1), np.float32)
        x += np.float32(1e-7) * np.random.default_rng(bits).standard_normal(x.shape).astype(np.float32) * (scale > 0.1)
        node, constants = _quant("act", "x", "y", bits, signed, narrow, "ROUND", scale, zero)
        model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, x.shape)], constants)
        result = lowered(model)
        narrower = (low, high) not in ((-128, 127), (0, 255))
        exact_sum = ["Div", "Add"] if np.any(zero != 0) else []
        assert ops(result) == [*exact_sum, "QuantizeLinear", *(["Clip"] if narrower else []), "DequantizeLinear"]
        np.testing.assert_array_equal(run(result, {"x": x})[0],
                                      reference_quant(x, scale, zero, bits, signed, narrow, "ROUND"))


def test_a_zero_point_is_added_before_rounding_as_qonnx_does() -> None:
    """x / scale = 0.5 - 2**-25: QuantizeLinear rounds it to 0 and adds 1; QONNX's float32 sum 1.5 rounds to 2."""
    x = np.array([[np.nextafter(np.float32(0.5), np.float32(0))]], np.float32)
    node, constants = _quant("act", "x", "y", 8, False, False, "ROUND", np.array(1.0), np.array(1.0))
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1])], constants)
    expected = reference_quant(x, np.array(1.0), np.array(1.0), 8, False, False, "ROUND")
    assert expected[0, 0] == 1.0
    np.testing.assert_array_equal(run(lowered(model), {"x": x})[0], expected)


@pytest.mark.parametrize("attrs, inputs, message", [
    ({"rounding_mode": "FLOOR"}, None, "rounding mode FLOOR on an activation"),
    ({"rounding_mode": "NEAREST"}, None, "unknown rounding mode 'NEAREST'"),
    ({}, {"b": 16.0}, "16-bit activations"),
    ({}, {"b": 1.0}, "bipolar"),
    ({}, {"z": 0.5}, "zero point is not an integer"),
])
def test_activation_quantisers_without_an_exact_lowering_are_refused(attrs: dict[str, str],
                                                                    inputs: dict[str, float] | None,
                                                                    message: str) -> None:
    values = {"s": 0.1, "z": 0.0, "b": 8.0, **(inputs or {})}
    node = helper.make_node("Quant", ["x", "s", "z", "b"], ["y"], name="relu_quant", domain=QONNX, signed=1, narrow=0,
                            **({"rounding_mode": "ROUND"} | attrs))
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                   [_f32(name, value) for name, value in values.items()])
    with pytest.raises(QonnxLoweringError) as error:
        lowered(model)
    text = str(error.value)
    assert text.startswith("node 'relu_quant' (qonnx.custom_op.general.Quant): ") and message in text
    assert "\n" not in text


def test_bipolar_activations_are_refused() -> None:
    node = helper.make_node("BipolarQuant", ["x", "s"], ["y"], name="sign", domain=QONNX)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [_f32("s", 1.0)])
    with pytest.raises(QonnxLoweringError,
                       match=r"^node 'sign' \(qonnx.custom_op.general.BipolarQuant\): .*activation"):
        lowered(model)


# -- Trunc (TruncAvgPool2d) ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("signed, narrow, bits", [(True, False, 8), (False, False, 8), (True, True, 4)])
def test_trunc_after_average_pool(mode: str, signed: bool, narrow: bool, bits: int) -> None:
    scale_in = np.float32(0.0114)
    low, high = _limits(8, signed, False)
    x = np.random.default_rng(7).integers(low, high + 1, (1, 3, 8, 8)).astype(np.float32) * scale_in
    pool = helper.make_node("AveragePool", ["x"], ["pooled"], kernel_shape=[2, 2], strides=[2, 2])
    trunc = helper.make_node("Trunc", ["pooled", "s", "z", "ib", "os", "ob"], ["y"], name="trunc", domain=QONNX,
                             rounding_mode=mode.lower(), signed=int(signed), narrow=int(narrow))
    constants = [_f32("s", scale_in / 4), _f32("z", 0.0), _f32("ib", 10.0), _f32("os", scale_in), _f32("ob", bits)]
    model = _model([pool, trunc], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])], constants)
    result = lowered(model)
    assert "Trunc" not in ops(result) and ops(result)[-1] == "DequantizeLinear"
    pooled = run(_model([pool], [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 3, 4, 4])], []), {"x": x})[0]
    expected = reference_trunc(pooled, float(scale_in / 4), 0.0, float(scale_in), bits, signed, narrow, mode)
    got = run(result, {"x": x})[0]
    np.testing.assert_array_equal(got, expected)
    assert len(np.unique(got)) > 5


@pytest.mark.parametrize("kernel, signed", [(2, False), (3, True), (4, False)])
def test_trunc_average_pool_of_integers_becomes_an_integer_window_sum(kernel: int, signed: bool,
                                                                       tmp_path: Path) -> None:
    """``Quant → AveragePool → Trunc(ROUND)`` (TruncAvgPool2d) is a depthwise sum QLinearConv, same as qonnx."""
    s_in = np.float32(0.0123)
    low, high = _limits(8, signed, False)
    nodes, constants = [], []
    node, extra = _quant("q", "x", "xq", 8, signed, False, "ROUND", np.array(s_in), np.array(0.0))
    area = kernel * kernel
    shift = 2 ** math.ceil(math.log2(area))
    nodes += [node, helper.make_node("AveragePool", ["xq"], ["p"], kernel_shape=[kernel, kernel],
                                     strides=[kernel, kernel]),
              helper.make_node("Trunc", ["p", "ts", "tz", "tib", "tos", "tob"], ["y"], name="trunc", domain=QONNX,
                               rounding_mode="ROUND", signed=int(signed), narrow=0)]
    constants += [*extra, _f32("ts", s_in / np.float32(area)), _f32("tz", 0.0), _f32("tib", 16.0),
                  _f32("tos", s_in * np.float32(shift / area)), _f32("tob", 8.0)]
    size = 4 * kernel
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, size, size])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 4, 4])], constants)
    model.graph.value_info.append(helper.make_tensor_value_info("xq", TensorProto.FLOAT, [1, 3, size, size]))
    result = lowered(model)  # (the compiler's front end infers that shape; the window sum needs the channels)
    assert "AveragePool" not in ops(result) and "Conv" in ops(result)
    onnx.save(result, tmp_path / "lowered.onnx")
    x = (np.random.default_rng(kernel).integers(low - 2, high + 3, (1, 3, size, size)) * s_in).astype(np.float32)
    quantised = reference_quant(x, np.array(s_in), np.array(0.0), 8, signed, False, "ROUND")
    pooled = run(_model([nodes[1]], [helper.make_tensor_value_info("xq", TensorProto.FLOAT, x.shape)],
                        [helper.make_tensor_value_info("p", TensorProto.FLOAT, [1, 3, 4, 4])], []), {"xq": quantised})[0]
    expected = reference_trunc(pooled, float(s_in / np.float32(area)), 0.0, float(s_in * np.float32(shift / area)), 8,
                               signed, False, "ROUND")
    np.testing.assert_array_equal(run_reference(tmp_path / "lowered.onnx", {"x": x})[0], expected)


# -- QCDQ weight chains ----------------------------------------------------------------------------------------------

def _conv_model(weight_nodes: list[onnx.NodeProto], initializers: list[onnx.TensorProto]) -> onnx.ModelProto:
    conv = helper.make_node("Conv", ["x", "w"], ["y"], name="conv", pads=[1, 1, 1, 1])
    return _model([*weight_nodes, conv], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 5])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 5, 5])], initializers)


@pytest.mark.parametrize("chain", ["Q-Clip-DQ", "Q-DQ", "Clip-DQ", "Q-Clip-DQ per channel"])
def test_qcdq_weight_chains_fold_into_one_integer_constant(chain: str) -> None:
    rng = np.random.default_rng(11)
    weights = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
    per_channel = chain.endswith("per channel")
    scale = (rng.uniform(0.05, 0.2, 4) if per_channel else np.array(0.1)).astype(np.float32)
    zero = np.zeros(scale.shape, np.int8)
    integers = np.clip(np.round(weights / (scale.reshape(4, 1, 1, 1) if per_channel else scale)), -128, 127)
    initializers = [_f32("ws", scale), numpy_helper.from_array(zero, "wz"),
                    numpy_helper.from_array(np.array(-7, np.int8), "lo"),
                    numpy_helper.from_array(np.array(7, np.int8), "hi")]
    dq = helper.make_node("DequantizeLinear", ["wc", "ws", "wz"], ["w"], axis=0)
    if chain == "Clip-DQ":  # Brevitas' TorchScript export: the int8 weights, clipped to the bit width
        initializers.append(numpy_helper.from_array(integers.astype(np.int8), "wi"))
        nodes = [helper.make_node("Clip", ["wi", "lo", "hi"], ["wc"]), dq]
    elif chain == "Q-DQ":
        initializers.append(_f32("wf", weights))
        nodes = [helper.make_node("QuantizeLinear", ["wf", "ws", "wz"], ["wc"], axis=0), dq]
    else:  # Brevitas' dynamo export
        initializers.append(_f32("wf", weights))
        nodes = [helper.make_node("QuantizeLinear", ["wf", "ws", "wz"], ["wq"], axis=0),
                 helper.make_node("Clip", ["wq", "lo", "hi"], ["wc"]), dq]
    model = _conv_model(nodes, initializers)
    result = lowered(model)
    assert ops(result) == ["DequantizeLinear", "Conv"]
    folded = stored_integers(result)
    assert folded.dtype == np.int8
    expected = integers if chain == "Q-DQ" else np.clip(integers, -7, 7)
    np.testing.assert_array_equal(folded, expected.astype(np.int8))
    x = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    np.testing.assert_array_equal(run(result, {"x": x})[0], run(model, {"x": x})[0])


def test_activation_chains_are_left_to_the_qdq_rewrite() -> None:
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             helper.make_node("Clip", ["q", "lo", "hi"], ["c"]),
             helper.make_node("DequantizeLinear", ["c", "s", "z"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                   [_f32("s", 0.1), numpy_helper.from_array(np.array(0, np.int8), "z"),
                    numpy_helper.from_array(np.array(-8, np.int8), "lo"),
                    numpy_helper.from_array(np.array(7, np.int8), "hi")])
    assert ops(lowered(model)) == ["QuantizeLinear", "Clip", "DequantizeLinear"]


# -- compiled, built and run -----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def host() -> PluginHost:
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


def qonnx_network(trunc_mode: str) -> onnx.ModelProto:
    """int8 input → Conv (4-bit per-channel weights, int32 bias) → Relu → uint8 → AveragePool → Trunc → Gemm."""
    rng = np.random.default_rng(5)
    s_in, s_act = np.float32(1 / 64), np.float32(0.02)
    s_w = rng.uniform(0.05, 0.1, (4, 1, 1, 1)).astype(np.float32)
    nodes, constants = [], []
    for node, extra in (_quant("q_in", "x", "xq", 8, True, False, "ROUND", np.array(s_in), np.array(0.0)),
                        _quant("q_w", "w", "wq", 4, True, True, "ROUND", s_w, np.array(0.0)),
                        _quant("q_b", "b", "bq", 32, True, False, "ROUND", (s_w * s_in).reshape(4), np.array(0.0)),
                        _quant("q_act", "r", "rq", 8, False, False, "ROUND", np.array(s_act), np.array(0.0)),
                        _quant("q_fw", "fw", "fwq", 8, True, True, "ROUND", np.array(0.01), np.array(0.0)),
                        _quant("q_out", "g", "y", 8, True, False, "ROUND", np.array(0.05), np.array(0.0))):
        nodes.append(node)
        constants.extend(extra)
    nodes[3:3] = [helper.make_node("Conv", ["xq", "wq", "bq"], ["c"], name="conv", pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"], name="relu")]
    nodes[-1:-1] = [
        helper.make_node("AveragePool", ["rq"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Trunc", ["p", "ts", "tz", "tib", "tos", "tob"], ["t"], name="trunc", domain=QONNX,
                         rounding_mode=trunc_mode, signed=0, narrow=0),
        helper.make_node("Flatten", ["t"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fwq"], ["g"], name="fc", transB=1)]
    constants += [_f32("w", rng.standard_normal((4, 1, 3, 3)) * 0.3), _f32("b", rng.standard_normal(4) * 0.01),
                  _f32("fw", rng.standard_normal((5, 64)) * 0.3), _f32("ts", s_act / 4), _f32("tz", 0.0),
                  _f32("tib", 10.0), _f32("tos", s_act), _f32("tob", 8.0)]
    return _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 8, 8])],
                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], constants)


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
@pytest.mark.parametrize("trunc_mode", ["ROUND", "FLOOR", "HALF_UP"])
def test_qonnx_network_compiles_and_matches_onnx_runtime(trunc_mode: str, platform: str, host: PluginHost,
                                                         tmp_path: Path) -> None:
    model = qonnx_network(trunc_mode)
    path, lowered_path = tmp_path / "qonnx.onnx", tmp_path / "lowered.onnx"
    onnx.save(model, path)
    onnx.save(lowered(model), lowered_path)
    _, generated = compile_model(path, CompileOptions(platform=platform), host)
    layers = generated.report["layers"]
    assert not any(layer["op"] in ("Quant", "Trunc") for layer in layers)
    if trunc_mode == "ROUND":  # integer throughout; the other modes round in float ops (exactly)
        assert [layer["op"] for layer in layers if layer["outputs"][0]["dtype"] == "float32"] == ["DequantizeLinear"]
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment())
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.uniform(-2.2, 2.2, (1, 1, 8, 8)).astype(np.float32)
        got = run_network(executable, generated, {"x": x}, repeats=1)[0][0]
        want = run_reference(lowered_path, {"x": x})[0]
        np.testing.assert_array_equal(got, want)


def test_validate_runs_qonnx_models(host: PluginHost) -> None:
    """ONNX Runtime cannot run Quant/Trunc: validate's reference runs the model with them lowered instead."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "qonnx.onnx"
        onnx.save(qonnx_network("ROUND"), path)
        _, result = validate_model(path, CompileOptions(platform="generic-c"), host, atol=0.0, rtol=0.0, repeats=1)
    assert result.ok and all(comparison.max_abs_error == 0 for comparison in result.comparisons), result.comparisons


def test_supported_ops_lists_the_qonnx_ops_on_every_platform(host: PluginHost) -> None:
    from deeploy_core.supported_ops import supported_operators

    for platform in ("generic-c", "pulp-cluster"):
        rows = {row["op"]: row for row in supported_operators(host, platform)}
        for op in ("Quant", "Trunc", "BipolarQuant"):
            row = rows[f"{QONNX}.{op}"]
            assert row["platforms"] == ["generic-c", "pulp-cluster"] and row["source"] == "core lowering"
        assert "stored one per byte" in rows[f"{QONNX}.Quant"]["constraints"]


def test_an_unsupported_qonnx_quantiser_stops_the_compile_in_one_line(host: PluginHost, tmp_path: Path) -> None:
    model = qonnx_network("ROUND")
    quantiser = next(node for node in model.graph.node if node.name == "q_act")
    next(attribute for attribute in quantiser.attribute if attribute.name == "rounding_mode").s = b"FLOOR"
    path = tmp_path / "floor.onnx"
    onnx.save(model, path)
    with pytest.raises(QonnxLoweringError) as error:
        compile_model(path, CompileOptions(platform="generic-c"), host)
    assert str(error.value).startswith("node 'q_act' (qonnx.custom_op.general.Quant): rounding mode FLOOR")
