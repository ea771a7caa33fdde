"""The QDQ → integer rewrite recognises every exporter's island shape and says whose arithmetic to use.

Graph-level checks (the kernels' arithmetic is tested against ONNX Runtime and
LiteRT in the plugins' tests): tf2onnx's activation between the op and its
QuantizeLinear becomes the fused node's clamp, its Dense (MatMul + bias Add)
becomes QGemm with the int32 bias, a QCDQ Clip narrows the clamp, and the
validation reference writes the clamp as integer Max/Min that ONNX Runtime runs.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.lowering.qdq import QDQToInteger, QDQToIntegerExact
from deeploy_core.lowering.qdq_reference import fused_qdq_model
from deeploy_core.lowering.quantized_bounds import quantized_bound

X_SCALE, Y_SCALE = 0.02, 0.05


def _const(name: str, value: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value), name)


def _conv_island(activation: list[onnx.NodeProto], y_zero: int, clip_after: tuple[int, int] | None = None
                 ) -> onnx.ModelProto:
    """DQ(x) → Conv(DQ(w), DQ(b)) → activation… → Q [→ Clip → DQ]: tf2onnx's (and Brevitas') layer."""
    rng = np.random.default_rng(0)
    weights = rng.integers(-127, 128, (4, 3, 3, 3), dtype=np.int8)
    w_scale = np.linspace(0.01, 0.02, 4).astype(np.float32)
    bias = rng.integers(-500, 500, 4).astype(np.int32)
    inits = [_const("xs", np.float32(X_SCALE)), _const("xz", np.int8(-1)), _const("w", weights), _const("ws", w_scale),
             _const("wz", np.zeros(4, np.int8)), _const("b", bias), _const("bs", (np.float32(X_SCALE) * w_scale)),
             _const("bz", np.zeros(4, np.int32)), _const("ys", np.float32(Y_SCALE)), _const("yz", np.int8(y_zero))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"], name="dq_x"),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], name="dq_w", axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], name="dq_b", axis=0),
             helper.make_node("Conv", ["xf", "wf", "bf"], ["conv"], name="conv", pads=[1, 1, 1, 1])]
    last = "conv"
    for node in activation:
        node.input[0] = last
        nodes.append(node)
        last = node.output[0]
    nodes.append(helper.make_node("QuantizeLinear", [last, "ys", "yz"], ["q"], name="q"))
    output = "q"
    if clip_after is not None:
        inits += [_const("lo", np.int8(clip_after[0])), _const("hi", np.int8(clip_after[1]))]
        nodes += [helper.make_node("Clip", ["q", "lo", "hi"], ["qc"], name="qcdq_clip"),
                  helper.make_node("DequantizeLinear", ["qc", "ys", "yz"], ["y"], name="dq_y")]
        output = "y"
    out_type = TensorProto.FLOAT if clip_after is not None else TensorProto.INT8
    graph = helper.make_graph(nodes, "island", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 3, 6, 6])],
                              [helper.make_tensor_value_info(output, out_type, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)])
    return onnx.shape_inference.infer_shapes(model)


def _fused(model: onnx.ModelProto, rewrite: QDQToInteger) -> list[gs.Node]:
    graph = gs.import_onnx(model)
    assert rewrite.apply_pass(graph, {}) == 1
    graph.cleanup().toposort()
    return list(graph.nodes)


def _clip_node(low: float, high: float) -> list[onnx.NodeProto]:
    return [helper.make_node("Clip", ["", "clip_lo", "clip_hi"], ["act"], name="relu6")]


def _with_bounds(model: onnx.ModelProto, low: float, high: float) -> onnx.ModelProto:
    model.graph.initializer.extend([_const("clip_lo", np.float32(low)), _const("clip_hi", np.float32(high))])
    return model


@pytest.mark.parametrize("rewrite, arithmetic", [(QDQToInteger(), "tflite"), (QDQToIntegerExact(), "float32")])
def test_relu_between_conv_and_quantize_becomes_a_clamp_at_the_zero_point(rewrite: QDQToInteger, arithmetic: str
                                                                          ) -> None:
    model = _conv_island([helper.make_node("Relu", [""], ["act"], name="relu")], y_zero=3)
    [node] = _fused(model, rewrite)
    assert node.op == "QLinearConv" and node.attrs["requantization"] == arithmetic
    assert (node.attrs["output_min"], node.attrs["output_max"]) == (3, 127)
    assert isinstance(node.inputs[3], gs.Constant) and node.inputs[3].values.dtype == np.int8  # int8 weights, no copy
    assert node.inputs[8].values.dtype == np.int32


def test_relu_at_the_type_minimum_needs_no_clamp() -> None:
    """tf2onnx's usual zero point -128: the Relu changes nothing after QuantizeLinear's saturation."""
    [node] = _fused(_conv_island([helper.make_node("Relu", [""], ["act"], name="relu")], y_zero=-128), QDQToInteger())
    assert "output_min" not in node.attrs and "output_max" not in node.attrs


@pytest.mark.parametrize("rewrite, arithmetic", [(QDQToInteger(), "tflite"), (QDQToIntegerExact(), "float32")])
def test_relu6_clip_bounds_are_quantised_in_the_modes_arithmetic(rewrite: QDQToInteger, arithmetic: str) -> None:
    model = _with_bounds(_conv_island(_clip_node(0.0, 6.0), y_zero=-20), 0.0, 6.0)
    [node] = _fused(model, rewrite)
    expected_high = quantized_bound(6.0, Y_SCALE, -20, np.dtype(np.int8), arithmetic)
    assert (node.attrs["output_min"], node.attrs["output_max"]) == (-20, expected_high) == (-20, 100)


def test_bounds_round_ties_as_each_reference_does() -> None:
    """A bound on a half step: ONNX Runtime rounds half to even, TFLite half away from zero."""
    assert quantized_bound(2.5, 1.0, 0, np.dtype(np.int8), "float32") == 2
    assert quantized_bound(2.5, 1.0, 0, np.dtype(np.int8), "tflite") == 3
    assert quantized_bound(-2.5, 1.0, 0, np.dtype(np.int8), "tflite") == -3
    assert quantized_bound(1000.0, 1.0, 0, np.dtype(np.int8), "tflite") == 127


def test_qcdq_clip_after_quantize_narrows_the_clamp() -> None:
    """Brevitas' 4-bit activation: Q → Clip(-8, 7) → DQ."""
    nodes = _fused(_conv_island([], y_zero=0, clip_after=(-8, 7)), QDQToIntegerExact())
    fused = [n for n in nodes if n.op == "QLinearConv"]
    assert len(fused) == 1 and (fused[0].attrs["output_min"], fused[0].attrs["output_max"]) == (-8, 7)
    assert not [n for n in nodes if n.op in ("Clip", "QuantizeLinear")]


def _dense(per_column: bool) -> onnx.ModelProto:
    """tf2onnx's Dense: DQ(x) → MatMul(DQ(w [in, out])) → Add(DQ(int32 bias)) → Relu → Q."""
    rng = np.random.default_rng(1)
    w_scale = np.linspace(0.01, 0.03, 5).astype(np.float32) if per_column else np.float32(0.02)
    inits = [_const("xs", np.float32(X_SCALE)), _const("xz", np.int8(4)),
             _const("w", rng.integers(-127, 128, (8, 5), dtype=np.int8)), _const("ws", w_scale),
             _const("wz", np.zeros(5, np.int8) if per_column else np.int8(0)),
             _const("b", rng.integers(-900, 900, 5).astype(np.int32)),
             _const("bs", np.float32(X_SCALE) * w_scale), _const("bz", np.zeros(5, np.int32) if per_column else np.int32(0)),
             _const("ys", np.float32(Y_SCALE)), _const("yz", np.int8(-5))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
             helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bf"], axis=0),
             helper.make_node("MatMul", ["xf", "wf"], ["mm"], name="dense"),
             helper.make_node("Add", ["mm", "bf"], ["biased"], name="bias"),
             helper.make_node("Relu", ["biased"], ["act"], name="relu"),
             helper.make_node("QuantizeLinear", ["act", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 5])], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]))


@pytest.mark.parametrize("per_column", [False, True], ids=["per-tensor", "per-column"])
def test_matmul_with_bias_add_becomes_qgemm_with_the_int32_bias(per_column: bool) -> None:
    [node] = _fused(_dense(per_column), QDQToIntegerExact())
    assert node.op == "QGemm" and node.domain == "com.microsoft" and node.attrs["transB"] == 0
    assert node.inputs[6].values.dtype == np.int32 and node.inputs[6].values.shape == (5,)
    assert (node.attrs["output_min"], node.attrs["output_max"]) == (-5, 127)


@pytest.mark.parametrize("per_column", [False, True], ids=["per-tensor", "per-column"])
def test_reference_fusion_runs_on_onnx_runtime_and_equals_the_float_graph_here(per_column: bool) -> None:
    """The reference's QGemm + Max equals ONNX Runtime's unfused graph on these inputs (no half-step ties)."""
    model = _dense(per_column)
    fused = fused_qdq_model(model)
    assert fused is not None and [n.op_type for n in fused.graph.node] == ["QGemm", "Max"]
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    plain = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    reference = ort.InferenceSession(fused.SerializeToString(), options, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(2)
    for _ in range(50):
        x = rng.integers(-128, 128, (1, 8), dtype=np.int8)
        expected, actual = plain.run(None, {"x": x})[0], reference.run(None, {"x": x})[0]
        assert np.abs(expected.astype(int) - actual.astype(int)).max() <= 1
        assert actual.min() >= -5


def _pool_or_softmax(op: str, y_scale: float, y_zero: int) -> onnx.ModelProto:
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]} if op == "AveragePool" else {"axis": -1}
    shape = [1, 2, 4, 4] if op == "AveragePool" else [1, 10]
    inits = [_const("xs", np.float32(0.1)), _const("xz", np.int8(0)), _const("ys", np.float32(y_scale)),
             _const("yz", np.int8(y_zero))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node(op, ["xf"], ["v"], name="op", **attrs),
             helper.make_node("QuantizeLinear", ["v", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "unary", [helper.make_tensor_value_info("x", TensorProto.INT8, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, None)], inits)
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 15)]))


def test_tflite_arithmetic_only_where_tflite_has_the_kernel() -> None:
    """An average pool that rescales has no TFLite kernel: fixed-point falls back to the platform's own."""
    [same] = _fused(_pool_or_softmax("AveragePool", 0.1, 0), QDQToInteger())
    [rescaled] = _fused(_pool_or_softmax("AveragePool", 0.3, 2), QDQToInteger())
    assert same.attrs["requantization"] == "tflite" and "requantization" not in rescaled.attrs
    [softmax] = _fused(_pool_or_softmax("Softmax", 1 / 256, -128), QDQToInteger())
    assert softmax.op == "QLinearSoftmax" and softmax.attrs["requantization"] == "tflite"
    graph = gs.import_onnx(_pool_or_softmax("Softmax", 1 / 200, -128))
    assert QDQToInteger().apply_pass(graph, {}) is None  # not TFLite's output quantisation: stays float
    [exact] = _fused(_pool_or_softmax("Softmax", 1 / 200, -128), QDQToIntegerExact())
    assert exact.attrs["requantization"] == "float32"


def test_padding_left_out_of_the_count_is_fused_where_the_arithmetic_divides_by_inside_pixels() -> None:
    """TFLite's SAME average pool (count_include_pad=0): both modes' kernels divide by the in-bounds pixels."""
    model = _pool_or_softmax("AveragePool", 0.1, 0)
    pool = next(node for node in model.graph.node if node.op_type == "AveragePool")
    pool.attribute.extend([helper.make_attribute("pads", [0, 0, 1, 1]), helper.make_attribute("count_include_pad", 0)])
    for rewrite, arithmetic in ((QDQToInteger(), "tflite"), (QDQToIntegerExact(), "float32")):
        [node] = _fused(model, rewrite)
        assert node.attrs["requantization"] == arithmetic and node.attrs["pads"] == [0, 0, 1, 1]
    rescaling = _pool_or_softmax("AveragePool", 0.3, 2)  # no TFLite kernel: the platform's own, which cannot
    pool = next(node for node in rescaling.graph.node if node.op_type == "AveragePool")
    pool.attribute.extend([helper.make_attribute("pads", [0, 0, 1, 1]), helper.make_attribute("count_include_pad", 0)])
    assert QDQToInteger().apply_pass(gs.import_onnx(rescaling), {}) is None


def test_a_float_bias_is_quantised_in_fixed_point_mode_and_kept_float_in_exact_mode() -> None:
    """Brevitas' dynamo export leaves biases float: fixed-point quantises them as TFLite's converter does, exact
    mode fuses the layer all the same and keeps the bias float32 (ONNX Runtime adds it in float)."""
    model = _conv_island([], y_zero=0)
    bias_init = next(init for init in model.graph.initializer if init.name == "b")
    float_bias = numpy_helper.to_array(bias_init).astype(np.float32) * np.float32(X_SCALE) * np.linspace(
        0.01, 0.02, 4).astype(np.float32) + np.float32(1e-4)
    model.graph.initializer.append(_const("bias_float", float_bias))
    conv = next(node for node in model.graph.node if node.op_type == "Conv")
    conv.input[2] = "bias_float"
    [node] = _fused(model, QDQToInteger())
    w_scale = np.linspace(0.01, 0.02, 4).astype(np.float32)
    expected = np.round(float_bias.astype(np.float64) / (np.float32(X_SCALE) * w_scale).astype(np.float64))
    assert node.inputs[8].values.dtype == np.int32
    np.testing.assert_array_equal(node.inputs[8].values, expected.astype(np.int32))
    [exact] = _fused(model, QDQToIntegerExact())
    assert exact.attrs["requantization"] == "float32" and exact.inputs[8].values.dtype == np.float32
    np.testing.assert_array_equal(exact.inputs[8].values, float_bias)  # added in float32 by exact mode's kernel
