"""Graphs the fuzzer (``bench/fuzz.py``, ``deeploy_core.testing.fuzz``) found failing, rebuilt explicitly.

Each test names what was wrong.  They compile for generic C, build, run and
compare with ONNX Runtime, so they skip when the generic C plugin is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.rounding import judged_outputs
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.reference import run_reference

generic_c = pytest.importorskip("deeploy_generic_c.plugin", reason="the generic C plugin (deeploy-generic-c) is not installed")


@pytest.fixture(scope="module")
def host() -> PluginHost:
    host = PluginHost()
    host.add_plugin(generic_c, name="generic-c", distribution="deeploy-generic-c")
    return host


@pytest.fixture(scope="module")
def runtime_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("regression-runtime")


def constant(name: str, values: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values), name)


def model(nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto], outputs: list[onnx.ValueInfoProto],
          constants: list[onnx.TensorProto]) -> onnx.ModelProto:
    built = helper.make_model(helper.make_graph(nodes, "regression", inputs, outputs, constants),
                              opset_imports=[helper.make_opsetid("", 22)])
    onnx.checker.check_model(built, full_check=True)
    return built


def quantised_matmul(a_shape: list[int], b_values: np.ndarray, y_shape: list[int]) -> onnx.ModelProto:
    """x → Q → DQ → MatMul(·, DQ(int8 B)) → Q: the island a static quantizer emits for a MatMul."""
    return model(
        [helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
         helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
         helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
         helper.make_node("MatMul", ["xd", "bd"], ["y"]),
         helper.make_node("QuantizeLinear", ["y", "sy", "zy"], ["yq"])],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, a_shape)],
        [helper.make_tensor_value_info("yq", TensorProto.INT8, y_shape)],
        [constant("sx", np.float32(0.02)), constant("zx", np.int8(3)), constant("bq", b_values),
         constant("sb", np.float32(0.01)), constant("zb", np.int8(0)), constant("sy", np.float32(0.03)),
         constant("zy", np.int8(-2))],
    )


def quantised_pool(op: str, x_shape: list[int], y_shape: list[int], **attributes: object) -> onnx.ModelProto:
    """int8 x → DQ → pool → Q with the same scale and zero point (as quantizers share them around pooling)."""
    return model(
        [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["xd"]),
         helper.make_node(op, ["xd"], ["y"], **attributes),
         helper.make_node("QuantizeLinear", ["y", "s", "z"], ["yq"])],
        [helper.make_tensor_value_info("x", TensorProto.INT8, x_shape)],
        [helper.make_tensor_value_info("yq", TensorProto.INT8, y_shape)],
        [constant("s", np.float32(0.05)), constant("z", np.int8(1))],
    )


def fixed_point_layers(path: Path, host: PluginHost, tmp_path: Path, cache: Path) -> list[str]:
    """Compile in fixed-point mode, run on 5 inputs, require ≤ 1 LSB from ONNX Runtime; the layers' ops.

    Each graph here is one quantised layer, so every output has at most one layer of its own rounding (TFLite's
    arithmetic, or a float fallback that rounds as ONNX Runtime does) upstream: one step is its bound.
    """
    _, generated = compile_model(path, CompileOptions(platform="generic-c", quantization="fixed-point"), host)
    names = [spec.name for spec in generated.outputs]
    assert judged_outputs(generated.report["layers"], names) == names, "a graph of one layer rounds at most once"
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), cache)
    (name, dtype, shape), = [(v.name, v.type.tensor_type.elem_type, [d.dim_value for d in v.type.tensor_type.shape.dim])
                             for v in onnx.load(path).graph.input]
    rng = np.random.default_rng(11)
    for _ in range(5):
        if dtype == TensorProto.FLOAT:
            x = rng.standard_normal(shape).astype(np.float32)
        else:
            x = rng.integers(-128, 128, shape).astype(np.int8)
        actual, _ = run_network(executable, generated, {name: x}, repeats=1)
        comparisons = compare_outputs(generated, actual, run_reference(path, {name: x}), 0.0, 0.0, lsb_tolerance=1.0)
        assert all(c.ok for c in comparisons), [(c.name, c.max_lsb_error) for c in comparisons]
    return [layer["op"] for layer in generated.report["layers"]]


def test_fixed_point_keeps_a_matmul_by_a_vector_in_float(host: PluginHost, tmp_path: Path, runtime_cache: Path) -> None:
    """Was: DQ → MatMul(x, 1-D B) → Q became QLinearMatMul, which the platform then refused ("both operands need
    at least two dimensions"), failing the whole compile; the island now keeps its float fallback."""
    weights = np.random.default_rng(1).integers(-100, 100, (6,)).astype(np.int8)
    path = tmp_path / "matvec.onnx"
    onnx.save(quantised_matmul([3, 6], weights, [3]), path)
    assert "QLinearMatMul" not in fixed_point_layers(path, host, tmp_path, runtime_cache)


def test_fixed_point_keeps_a_partly_broadcast_batched_matmul_in_float(host: PluginHost, tmp_path: Path,
                                                                     runtime_cache: Path) -> None:
    """Was: A [2, 3, 4, 5] · B [3, 5, 6] became QLinearMatMul, whose kernel takes B either 2-D or with the whole
    batch ("batch dimensions must match or B must be 2-D"), failing the compile."""
    weights = np.random.default_rng(2).integers(-100, 100, (3, 5, 6)).astype(np.int8)
    path = tmp_path / "batched.onnx"
    onnx.save(quantised_matmul([2, 3, 4, 5], weights, [2, 3, 4, 6]), path)
    assert "QLinearMatMul" not in fixed_point_layers(path, host, tmp_path, runtime_cache)


def test_fixed_point_still_turns_a_plain_matmul_integer(host: PluginHost, tmp_path: Path, runtime_cache: Path) -> None:
    """The fix above must not cost the common case: a matrix times a 2-D weight is still QLinearMatMul."""
    weights = np.random.default_rng(3).integers(-100, 100, (5, 6)).astype(np.int8)
    path = tmp_path / "plain.onnx"
    onnx.save(quantised_matmul([2, 3, 4, 5], weights, [2, 3, 4, 6]), path)
    assert "QLinearMatMul" in fixed_point_layers(path, host, tmp_path, runtime_cache)


@pytest.mark.parametrize(("x_shape", "y_shape", "attributes", "integer"), [
    ([1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, False),
    ([1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, True),
    ([1, 2, 1, 7], [1, 2, 1, 4], {"kernel_shape": [1, 3], "strides": [1, 2], "auto_pad": "SAME_UPPER"}, True),
    ([1, 2, 5, 5], [1, 2, 3, 3], {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1],
                                  "count_include_pad": 1}, True),
], ids=["ceil_mode", "padding-not-counted", "same-padding-not-counted", "padding-counted"])
def test_fixed_point_average_pools_with_partial_windows_are_integer_or_kept_in_float(
    x_shape: list[int], y_shape: list[int], attributes: dict, integer: bool, host: PluginHost, tmp_path: Path,
    runtime_cache: Path,
) -> None:
    """Was: every quantised AveragePool became QLinearAveragePool, whose kernel divides by the full window and
    refuses ``ceil_mode`` or padding left out of the count, failing the compile (and SAME padding, which it did not
    see, came out 32 LSB off).  Fixed-point mode's pool is now TFLite's, which divides by the pixels inside the
    input (TFLite's SAME padding), so padding left out of the count is integer too; ``ceil_mode`` keeps the float
    fallback."""
    path = tmp_path / "pool.onnx"
    onnx.save(quantised_pool("AveragePool", x_shape, y_shape, **attributes), path)
    assert ("QLinearAveragePool" in fixed_point_layers(path, host, tmp_path, runtime_cache)) == integer


def test_fixed_point_keeps_global_max_pool_in_float(host: PluginHost, tmp_path: Path, runtime_cache: Path) -> None:
    """Was: GlobalMaxPool between DQ and Q of one quantisation ran "directly on the integers", but no platform has
    an integer GlobalMaxPool kernel, so the compile failed ("input 0 is int8, the kernel takes float32")."""
    path = tmp_path / "global_max.onnx"
    onnx.save(quantised_pool("GlobalMaxPool", [1, 3, 4, 4], [1, 3, 1, 1]), path)
    assert "GlobalMaxPool" in fixed_point_layers(path, host, tmp_path, runtime_cache)


def test_qlinear_average_pool_refuses_same_padding_left_out_of_the_count(host: PluginHost, tmp_path: Path) -> None:
    """Was: the QLinearAveragePool kernel looked for padding in the ``pads`` attribute only, so with
    ``auto_pad=SAME_UPPER`` and ``count_include_pad=0`` it divided the edge windows by the full area (32 LSB off
    ONNX Runtime on the fuzzed graph); it now refuses them like explicit padding."""
    from deeploy_core.errors import DeeployError

    parameters = [constant("s", np.float32(0.05)), constant("z", np.int8(1))]
    node = helper.make_node("QLinearAveragePool", ["x", "s", "z", "s", "z"], ["y"], domain="com.microsoft",
                            kernel_shape=[1, 3], strides=[1, 2], auto_pad="SAME_UPPER")
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 2, 1, 7])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 1, 4])], parameters)
    path = tmp_path / "qlinear_pool.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22), helper.make_opsetid("com.microsoft", 1)]),
              path)
    with pytest.raises(DeeployError, match="padding excluded from the count is not supported"):
        compile_model(path, CompileOptions(platform="generic-c"), host)


def test_fixed_point_gemm_without_bias_keeps_the_empty_bias_slot(host: PluginHost, tmp_path: Path,
                                                                 runtime_cache: Path) -> None:
    """Was: a quantised Gemm without C became a QGemm of 8 inputs, y_scale landing in C's slot, which the platform
    refused ("8 inputs, expected 9"); C's slot is now kept, empty."""
    weights = np.random.default_rng(4).integers(-100, 100, (5, 6)).astype(np.int8)
    path = tmp_path / "gemm.onnx"
    quantised = quantised_matmul([3, 5], weights, [3, 6])
    for node in quantised.graph.node:
        if node.op_type == "MatMul":
            node.op_type = "Gemm"
    onnx.save(quantised, path)
    assert "QGemm" in fixed_point_layers(path, host, tmp_path, runtime_cache)


def test_tiled_average_pool_does_not_count_the_ceil_mode_overhang_as_padding(host: PluginHost, tmp_path: Path,
                                                                             runtime_cache: Path) -> None:
    """Was: a tile's end padding was everything its last window read past the input, so with ``ceil_mode=1`` and
    ``count_include_pad=1`` the window that runs past the end (not into padding) was divided by the whole kernel:
    the last of [1.5, 3.5, 5.5, 7] came out 3.5 once the tiler cut the output into single elements."""
    from deeploy_core.validate import Toolchain

    for attributes, length, expected in [
        ({"kernel_shape": [2], "strides": [2]}, 7, [1.5, 3.5, 5.5, 7.0]),
        ({"kernel_shape": [3], "strides": [2], "pads": [1, 0]}, 7, [1.0, 3.0, 5.0, 6.5]),
    ]:
        node = helper.make_node("AveragePool", ["x"], ["y"], ceil_mode=1, count_include_pad=1, **attributes)
        graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, length])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, len(expected)])])
        path = tmp_path / "pool.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]), path)
        x = np.arange(1, length + 1, dtype=np.float32).reshape(1, 1, length)
        np.testing.assert_array_equal(run_reference(path, {"x": x})[0].reshape(-1), expected)
        options = CompileOptions(platform="generic-c", level_sizes={"L1": 200}, tiling_strategy="min")
        _, generated = compile_model(path, options, host)
        assert generated.report["tiling"]["layers"][0]["tiles"] == len(expected)
        executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
        (actual,), _ = run_network(executable, generated, {"x": x}, repeats=1)
        np.testing.assert_array_equal(actual.reshape(-1), expected)
