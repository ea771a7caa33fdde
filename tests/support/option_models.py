"""Tiny networks on which one compile option has a visible effect (deterministic weights).

The catalogue's networks are float32 with static shapes, and first-fit
already places them at their lower bound, so some options cannot change
anything there: fixing a dynamic shape needs a dynamic input, an integer
input type needs a network written in Deeploy's integer dialect, the
quantisation mode needs QDQ nodes, and a better allocator needs lifetimes
that defeat largest-first placement.  Each network here is the smallest one
found that shows its option's effect.

The option tests (``test_cli_option_effects``, ``test_extension_options``, ``test_report_schema``) use
them and no plugin's suite does, so they live here, not in the installed :mod:`deeploy_core.testing.models`.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 21


def _model(graph: onnx.GraphProto) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model, full_check=True)
    return model


def two_branch_mlp() -> onnx.ModelProto:
    """Gemm 31→39, then two branches (→17 and →36→20) concatenated.

    Largest-first placement puts the long-lived 17-wide branch output above
    the 39- and 36-wide tensors and leaves a gap; an optimal allocator packs
    the arena to its lower bound (592 vs 512 bytes).
    """
    rng = np.random.default_rng(53)

    def weight(name: str, rows: int, columns: int) -> onnx.TensorProto:
        return numpy_helper.from_array((rng.standard_normal((rows, columns)) * 0.3).astype(np.float32), name)

    nodes = [
        helper.make_node("Gemm", ["x", "w0"], ["t0"], transB=1, name="stem"),
        helper.make_node("Gemm", ["t0", "w1"], ["t1"], transB=1, name="short_branch"),
        helper.make_node("Gemm", ["t0", "w2"], ["t2"], transB=1, name="long_branch_a"),
        helper.make_node("Gemm", ["t2", "w3"], ["t3"], transB=1, name="long_branch_b"),
        helper.make_node("Concat", ["t1", "t3"], ["y"], axis=1, name="join"),
    ]
    return _model(helper.make_graph(
        nodes, "two_branch_mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 31])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 37])],
        [weight("w0", 39, 31), weight("w1", 17, 39), weight("w2", 36, 39), weight("w3", 20, 36)]))


def dynamic_conv() -> onnx.ModelProto:
    """Conv → Relu on an input of shape ``N × 2 × H × W``: nothing compiles until ``--input-shape`` fixes it."""
    rng = np.random.default_rng(7)
    weights = numpy_helper.from_array((rng.standard_normal((4, 2, 3, 3)) * 0.3).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("Relu", ["c"], ["y"], name="relu")]
    return _model(helper.make_graph(
        nodes, "dynamic_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 2, "H", "W"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H", "W"])], [weights]))


def integer_conv() -> onnx.ModelProto:
    """Conv → MaxPool in Deeploy's integer dialect: float-declared, whole-valued weights.

    Compiled as declared it runs in float; with an integer input type it runs
    on raw integers (int32 accumulators), and the input's C type is the one named.
    """
    rng = np.random.default_rng(2)
    weights = numpy_helper.from_array(rng.integers(-3, 4, (3, 2, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool")]
    return _model(helper.make_graph(
        nodes, "integer_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 2, 2])], [weights]))


QDQ_OUTPUT_SCALE = 0.1
"""The quantisation step of :func:`qdq_conv`'s output."""


def qdq_conv() -> onnx.ModelProto:
    """QuantizeLinear → DequantizeLinear → Conv (int8 weights, int32 bias) → QuantizeLinear → DequantizeLinear.

    The layout static quantizers emit: exact mode keeps the float Conv between
    the QDQ pairs, fixed-point mode turns the whole chain into one integer
    QLinearConv.
    """
    rng = np.random.default_rng(3)

    def scalar(name: str, value: float, dtype: type) -> onnx.TensorProto:
        return numpy_helper.from_array(np.array(value, dtype), name)

    initializers = [
        scalar("x_scale", 0.05, np.float32), scalar("x_zero", 0, np.int8),
        numpy_helper.from_array(rng.integers(-60, 61, (4, 2, 3, 3)).astype(np.int8), "w_q"),
        scalar("w_scale", 0.01, np.float32), scalar("w_zero", 0, np.int8),
        numpy_helper.from_array(rng.integers(-100, 101, (4,)).astype(np.int32), "b_q"),
        scalar("b_scale", 0.05 * 0.01, np.float32), scalar("b_zero", 0, np.int32),
        scalar("y_scale", QDQ_OUTPUT_SCALE, np.float32), scalar("y_zero", 0, np.int8),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zero"], ["x_q"], name="quantize_input"),
        helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zero"], ["x_dq"], name="dequantize_input"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zero"], ["w"], name="dequantize_weights"),
        helper.make_node("DequantizeLinear", ["b_q", "b_scale", "b_zero"], ["b"], name="dequantize_bias"),
        helper.make_node("Conv", ["x_dq", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("QuantizeLinear", ["c", "y_scale", "y_zero"], ["c_q"], name="quantize_output"),
        helper.make_node("DequantizeLinear", ["c_q", "y_scale", "y_zero"], ["y"], name="dequantize_output"),
    ]
    return _model(helper.make_graph(
        nodes, "qdq_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], initializers))
