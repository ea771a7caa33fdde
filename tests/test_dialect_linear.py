"""Linear ops of Deeploy's dialect (issue 19, item 2) on generic-c and pulp-cluster, bit-exact with numpy.

``RQGemm``/``RQMatMul`` are exported the way Deeploy writes its fused forms (default domain, no ONNX schema,
float-declared tensors holding integers, ``add`` before ``mul``); ``MatMulInteger`` both as ONNX defines it
(int8/uint8 tensors, zero points per tensor, per row of A or per column of B; checked against ONNX Runtime and
ONNX's backend node test too) and as QuantLib exports use it (float-declared, no zero points: Deeploy's alias
of integer MatMul).  Every network runs untiled, tiled into an L1 smaller than its tensors with single and double
buffering, and on the 8-core cluster; the C is built with -Werror and must reproduce
``tests/dialect_reference/linear.py`` exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import INT8, DataType
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.basic import requant_shift
from tests.dialect_reference.linear import matmul_integer, requantized_conv, rq_gemm, rq_matmul

CONFIGURATIONS: dict[str, CompileOptions] = {
    "generic-c untiled": CompileOptions(platform="generic-c"),
    "generic-c tiled single": CompileOptions(platform="generic-c", buffering="single"),
    "generic-c tiled double": CompileOptions(platform="generic-c", buffering="double"),
    "pulp-cluster 8 cores tiled single": CompileOptions(platform="pulp-cluster", buffering="single", cores=8),
    "pulp-cluster 8 cores tiled double": CompileOptions(platform="pulp-cluster", buffering="double", cores=8),
}
"""The tiled configurations get an L1 smaller than the network's tensors (:attr:`Network.tiled_l1`)."""


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


def _options(configuration: str, input_types: dict[str, DataType], tiled_l1: int) -> CompileOptions:
    base = CONFIGURATIONS[configuration]
    levels = {"L1": tiled_l1} if " tiled " in f"{configuration} " else {}
    return CompileOptions(platform=base.platform, level_sizes=levels, buffering=base.buffering, cores=base.cores,
                          input_types=dict(input_types))


@dataclass
class Network:
    """One single-node test network: the model, its runtime inputs, the expected output and the node's name.

    ``tiled_l1`` is the L1 size of the tiled configurations: smaller than the layer's tensors, so the tiler must cut
    them into several tiles, yet large enough for the alignment slack and the tile table of double buffering.
    """

    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    expected: np.ndarray
    node: str = "node"
    input_types: dict[str, DataType] = field(default_factory=dict)
    tiled_l1: int = 512


def _run(network: Network, configuration: str, host: PluginHost, tmp_path: Path) -> str:
    """Compile, build and run ``network``; assert bit-exactness, real tiling and sharing; return the node's kernel."""
    path = tmp_path / "network.onnx"
    onnx.save(network.model, path)
    options = _options(configuration, network.input_types, network.tiled_l1)
    generated, result = validate_with_data(path, options, host, network.inputs, [network.expected], atol=0.0,
                                           rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == network.node)
    tiled = "tiling" in layer["code_transformations"]
    assert tiled == (" tiled " in f"{configuration} ")
    if tiled:  # the layer's tensors exceed L1: several tiles, shared among the cluster's cores
        entry = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == network.node)
        assert entry["tiles"] > 1
        if "cores" in configuration:
            assert sum(work > 0 for work in entry["cluster"]["work"]) > 1
    return str(layer["kernel"])


def _float_constant(name: str, values: np.ndarray) -> onnx.TensorProto:
    """An initializer the way QuantLib writes one: integers stored in a float32 tensor."""
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


# -- RQGemm / RQMatMul (§8: the unfused op followed by RequantShift §2) ---------------------------------------------

DIV = 1 << 12


def rq_gemm_network(bias: str, trans_b: bool, signed: bool) -> Network:
    """A [24, 16] @ B [16, 32] (stored transposed with transB); bias C none, per column [32] or a whole [24, 32]
    matrix; with a bias per-column add/mul, without one scalars."""
    rng = np.random.default_rng(19)
    m, k, n = 24, 16, 32
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    c = None if bias == "none" else rng.integers(-5000, 5000, (m, n) if bias == "matrix" else (n,)).astype(np.int32)
    if c is not None:
        mul, add = rng.integers(1, 48, (n,)), rng.integers(-20000, 20000, (n,))
    else:
        mul, add = np.array([29]), np.array([-1500])
    levels = 256
    expected = rq_gemm(a, b, c, add, mul, DIV, levels, signed, trans_b=trans_b)
    initializers = [_float_constant("b", b), _float_constant("add", add), _float_constant("mul", mul)]
    inputs = ["a", "b", "add", "mul"]
    if c is not None:
        initializers.append(_float_constant("c", c))
        inputs.insert(2, "c")
    node = helper.make_node("RQGemm", inputs, ["y"], name="node", transB=int(trans_b), div=float(DIV),
                            n_levels=levels, signed=int(signed))
    graph = helper.make_graph([node], "rq_gemm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [m, k])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"a": a}, expected.astype(np.int8 if signed else np.uint8), input_types={"a": INT8},
                   tiled_l1=1536)


def rq_matmul_network(per_channel: bool) -> Network:
    """A [16, 4, 16] @ B [16, 8] (B broadcast over the batch), add/mul per channel of axis 1 (the 4 rows) or scalars."""
    rng = np.random.default_rng(23)
    a = rng.integers(-128, 128, (16, 4, 16)).astype(np.int8)
    b = rng.integers(-128, 128, (16, 8)).astype(np.int8)
    if per_channel:
        mul, add = rng.integers(1, 48, (1, 4, 1)), rng.integers(-20000, 20000, (1, 4, 1))
    else:
        mul, add = np.array(37), np.array(2047)
    expected = rq_matmul(a, b, add, mul, DIV)
    node = helper.make_node("RQMatMul", ["a", "b", "add", "mul"], ["y"], name="node", div=float(DIV), n_levels=256,
                            signed=1)
    graph = helper.make_graph([node], "rq_matmul", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [16, 4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 4, 8])],
                              [_float_constant("b", b), _float_constant("add", add), _float_constant("mul", mul)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"a": a}, expected.astype(np.int8), input_types={"a": INT8}, tiled_l1=1536)


RQ_GEMM_CASES = {
    "bias per column, transB, per-column, signed": ("column", True, True),
    "bias matrix, per-column, signed": ("matrix", False, True),
    "no bias, scalar, unsigned": ("none", False, False),
}


def test_the_rq_references_requantise_the_unfused_result() -> None:
    # 3·5 + 1 = 16; (16·3 + 8 + 8) >> 4 = 4; the clamp follows n_levels/signed, never the C type.
    a, b, c = np.array([[3]]), np.array([[5]]), np.array([1])
    assert rq_gemm(a, b, c, np.array([8]), np.array([3]), 16).tolist() == [[4]]
    assert rq_gemm(a, b, c, np.array([8]), np.array([3000]), 16, n_levels=16, signed=False).tolist() == [[15]]
    # Half up (toward +inf): -40 / 16 = -2.5 → -2 and 40 / 16 = 2.5 → 3.
    assert rq_matmul(np.array([[[-40]]]), np.array([[1]]), np.array(0), np.array(1), 16).tolist() == [[[-2]]]
    assert rq_matmul(np.array([[[40]]]), np.array([[1]]), np.array(0), np.array(1), 16).tolist() == [[[3]]]


@pytest.mark.parametrize("case", list(RQ_GEMM_CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_rq_gemm_is_bit_exact(configuration: str, case: str, host: PluginHost, tmp_path: Path) -> None:
    # 384 bytes of A, 512 of B and 768 of Y (with C, mul and add) exceed a 1.5 KiB L1; a bias matrix is cut with Y.
    assert _run(rq_gemm_network(*RQ_GEMM_CASES[case]), configuration, host, tmp_path) == "RQGemm integer"


@pytest.mark.parametrize("per_channel", [True, False], ids=["per channel", "scalar"])
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_rq_matmul_is_bit_exact(configuration: str, per_channel: bool, host: PluginHost, tmp_path: Path) -> None:
    # 1024 bytes of A, 128 of B and 512 of Y exceed a 1.5 KiB L1 (per-channel parameters: only the batch is cut).
    assert _run(rq_matmul_network(per_channel), configuration, host, tmp_path) == "RQMatMul integer"


# -- MatMulInteger as ONNX defines it (int8/uint8 tensors, zero points) ---------------------------------------------

@dataclass(frozen=True)
class MatMulIntegerCase:
    """Operand shapes and types, zero-point layouts ("none", "scalar", "row"/"column"), the tiled L1 size."""

    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    a_type: type[np.integer]
    b_type: type[np.integer]
    a_zero_point: str
    b_zero_point: str
    tiled_l1: int

    @property
    def onnx_runtime_runs_it(self) -> bool:
        """ONNX Runtime's CPU kernel takes a per-tensor a_zero_point only."""
        return self.a_zero_point != "row"


# The 2-D cases: 384 bytes of A, 512 of B and 3072 of int32 Y; the batched one 768 of A, 128 of B and 1536 of Y.
MATMUL_INTEGER_CASES = {
    "uint8 x int8, scalar zero points":
        MatMulIntegerCase((24, 16), (16, 32), np.uint8, np.int8, "scalar", "scalar", 2048),
    "int8 x uint8, zero point per column of B":
        MatMulIntegerCase((24, 16), (16, 32), np.int8, np.uint8, "scalar", "column", 2048),
    "uint8 x uint8, zero points per row of A and per column of B":
        MatMulIntegerCase((24, 16), (16, 32), np.uint8, np.uint8, "row", "column", 2048),
    "batched int8 x int8, B broadcast, no zero points":
        MatMulIntegerCase((6, 8, 16), (16, 8), np.int8, np.int8, "none", "none", 1024),
}

_ONNX_TYPES = {np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8}


def _zero_point(layout: str, count: int, dtype: type[np.integer], rng: np.random.Generator) -> np.ndarray | None:
    info = np.iinfo(dtype)
    low, high = (100, 156) if info.min == 0 else (-28, 28)  # near the middle, so A - za spans both signs
    if layout == "none":
        return None
    return rng.integers(low, high, () if layout == "scalar" else (count,)).astype(dtype)


def matmul_integer_network(case: MatMulIntegerCase) -> Network:
    """A (runtime) @ B (constant weights), zero points as initializers, every tensor typed as ONNX defines it."""
    rng = np.random.default_rng(29)
    a_info, b_info = np.iinfo(case.a_type), np.iinfo(case.b_type)
    a = rng.integers(a_info.min, int(a_info.max) + 1, case.a_shape).astype(case.a_type)
    b = rng.integers(b_info.min, int(b_info.max) + 1, case.b_shape).astype(case.b_type)
    za = _zero_point(case.a_zero_point, case.a_shape[-2], case.a_type, rng)
    zb = _zero_point(case.b_zero_point, case.b_shape[-1], case.b_type, rng)
    initializers = [numpy_helper.from_array(b, "b")]
    inputs = ["a", "b"]
    if za is not None or zb is not None:
        inputs += ["a_zero_point" if za is not None else "", "b_zero_point" if zb is not None else ""]
        initializers += [numpy_helper.from_array(value, name) for value, name in ((za, "a_zero_point"),
                                                                                  (zb, "b_zero_point"))
                         if value is not None]
    expected = matmul_integer(a, b, za, zb)
    node = helper.make_node("MatMulInteger", [name for name in inputs], ["y"], name="node")
    graph = helper.make_graph([node], "matmul_integer",
                              [helper.make_tensor_value_info("a", _ONNX_TYPES[case.a_type], list(case.a_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, list(expected.shape))],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"a": a}, expected, tiled_l1=case.tiled_l1)


def test_the_matmul_integer_reference_subtracts_zero_points_per_row_and_column() -> None:
    a, b = np.array([[10, 20], [30, 40]], np.uint8), np.array([[1, 2], [3, 4]], np.uint8)
    assert matmul_integer(a, b).tolist() == [[70, 100], [150, 220]]
    # Rows of A minus (10, 30), columns of B minus (1, 2): [[0, 10], [0, 10]] @ [[0, 0], [2, 2]].
    zero_points = np.array([10, 30], np.uint8), np.array([1, 2], np.uint8)
    assert matmul_integer(a, b, *zero_points).tolist() == [[20, 20], [20, 20]]


def _u8s8(network: Network) -> bool:
    """Whether the MatMulInteger multiplies uint8 activations by int8 weights."""
    a_type = network.model.graph.input[0].type.tensor_type.elem_type
    b_types = {t.data_type for t in network.model.graph.initializer if t.name == "b"}
    return a_type == TensorProto.UINT8 and b_types == {TensorProto.INT8}


def _x86_without_vnni() -> bool:
    """An x86 CPU without the VNNI dot-product instructions (Linux: read from /proc/cpuinfo)."""
    import platform

    if platform.machine() not in ("x86_64", "AMD64"):
        return False
    try:
        flags = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return False
    return "vnni" not in flags


@pytest.mark.parametrize("case", [name for name, case in MATMUL_INTEGER_CASES.items() if case.onnx_runtime_runs_it])
def test_the_matmul_integer_reference_agrees_with_onnx_runtime(case: str) -> None:
    import onnxruntime

    network = matmul_integer_network(MATMUL_INTEGER_CASES[case])
    if _u8s8(network) and _x86_without_vnni():
        pytest.skip("ONNX Runtime's uint8 x int8 kernel adds product pairs in saturating 16-bit lanes on x86 "
                    "without VNNI (why its quantiser offers reduce_range); the kernel test checks this case against "
                    "the numpy reference instead")
    session = onnxruntime.InferenceSession(network.model.SerializeToString(), providers=["CPUExecutionProvider"])
    (result,) = session.run(None, network.inputs)
    np.testing.assert_array_equal(result, network.expected)


@pytest.mark.parametrize("case", list(MATMUL_INTEGER_CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_matmul_integer_is_bit_exact(configuration: str, case: str, host: PluginHost, tmp_path: Path) -> None:
    assert _run(matmul_integer_network(MATMUL_INTEGER_CASES[case]), configuration, host, tmp_path) == \
        "MatMulInteger integer"


def _onnx_node_cases() -> list[tuple[str, onnx.ModelProto, dict[str, np.ndarray], np.ndarray]]:
    """ONNX's backend node tests of MatMulInteger: A and B stay runtime inputs, the zero points become initializers.

    The platform conformance suite runs float32 node cases only (it freezes every integer input into a constant);
    this op's cases are all integer, so they run here with their integer operands fed at run time.
    """
    from onnx.backend.test.case.node import collect_testcases

    cases = []
    for case in collect_testcases(None):
        model = case.model
        if model is None or len(model.graph.node) != 1 or model.graph.node[0].op_type != "MatMulInteger":
            continue
        for number, (inputs, outputs) in enumerate(case.data_sets or ()):
            frozen = onnx.ModelProto()
            frozen.CopyFrom(model)
            runtime: dict[str, np.ndarray] = {}
            kept = []
            for value, array in zip(model.graph.input, inputs):
                if value.name in ("A", "B"):
                    runtime[value.name] = np.asarray(array)
                    kept.append(value)
                else:
                    frozen.graph.initializer.append(numpy_helper.from_array(np.asarray(array), value.name))
            del frozen.graph.input[:]
            frozen.graph.input.extend(kept)
            cases.append((f"{case.name}#{number}", frozen, runtime, np.asarray(outputs[0])))
    return cases


def test_onnx_ships_node_cases_for_matmul_integer() -> None:
    assert [name for name, *_ in _onnx_node_cases()] == ["test_matmulinteger#0"]


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
def test_onnx_node_cases_of_matmul_integer_pass(platform: str, host: PluginHost, tmp_path: Path) -> None:
    for name, model, inputs, expected in _onnx_node_cases():
        path = tmp_path / f"{name}.onnx"
        onnx.save(model, path)
        toolchain = Toolchain.from_environment(extra_flags=strict_flags())
        _, result = validate_with_data(path, CompileOptions(platform=platform), host, inputs, [expected], atol=0.0,
                                       rtol=0.0, repeats=1, toolchain=toolchain)
        assert result.ok, (name, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons])


# -- MatMulInteger as QuantLib exports use it (float-declared, no zero points: Deeploy's integer MatMul alias) -------

def float_declared_matmul_integer_network() -> Network:
    """a [16, 32] @ W [32, 16] → RequantShift → z [16, 16] int8; then z @ c [16, 16] (a second runtime operand).

    Every tensor is declared FLOAT; the second MatMulInteger reads the RequantShift's output, whose type onnx
    learns only through the front end's proxy of that dialect op.
    """
    rng = np.random.default_rng(31)
    a = rng.integers(-128, 128, (16, 32)).astype(np.int8)
    c = rng.integers(-128, 128, (16, 16)).astype(np.int8)
    w = rng.integers(-128, 128, (32, 16))
    mul, add, div = np.array(3), np.array(-700), 1 << 11
    z = requant_shift(matmul_integer(a, w), mul, add, div, 256, True)
    expected = matmul_integer(z, c)
    nodes = [
        helper.make_node("MatMulInteger", ["a", "w"], ["acc"], name="mm1"),
        helper.make_node("RequantShift", ["acc", "mul", "add"], ["z"], name="rq", div=float(div), n_levels=256,
                         signed=1),
        helper.make_node("MatMulInteger", ["z", "c"], ["y"], name="mm2"),
    ]
    graph = helper.make_graph(nodes, "quantlib_matmul_integer",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, [16, 32]),
                               helper.make_tensor_value_info("c", TensorProto.FLOAT, [16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 16])],
                              [_float_constant("w", w), _float_constant("mul", mul), _float_constant("add", add)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"a": a, "c": c}, expected, node="mm2", input_types={"a": INT8, "c": INT8}, tiled_l1=1536)


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_float_declared_matmul_integer_runs_as_integer_matmul(configuration: str, host: PluginHost,
                                                               tmp_path: Path) -> None:
    # 256 bytes of z, 256 of c and 1024 of int32 y (with alignment) exceed a 1.5 KiB L1.
    assert _run(float_declared_matmul_integer_network(), configuration, host, tmp_path) == "MatMul integer"


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
def test_supported_ops_lists_the_linear_ops(platform: str) -> None:
    import json
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "deeploy_core", "supported-ops", "--platform", platform, "--json"],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": platform})
    assert result.returncode == 0, result.stderr
    assert {"RQGemm", "RQMatMul", "MatMulInteger"} <= {row["op"] for row in json.loads(result.stdout)}


# -- bad input: one line naming the node, the op and what to change -------------------------------------------------

def _compile_cli(model: onnx.ModelProto, tmp_path: Path, *extra: str) -> tuple[int, str]:
    import os
    import subprocess
    import sys

    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(path), "--platform", "generic-c",
                             "-o", str(tmp_path / "out"), *extra], capture_output=True, text=True,
                            env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
    return result.returncode, result.stderr


def test_an_rq_gemm_without_div_is_refused_in_one_line(tmp_path: Path) -> None:
    model = rq_gemm_network("column", True, True).model
    node = model.graph.node[0]
    kept = [attribute for attribute in node.attribute if attribute.name != "div"]
    del node.attribute[:]
    node.attribute.extend(kept)
    status, stderr = _compile_cli(model, tmp_path, "--input-type", "a=int8")
    assert status == 2
    assert stderr.strip().splitlines() == [
        "error: node 'node' (RQGemm): attribute — attribute 'div' is required (closest supported variant: "
        "RQGemm integer) (platform 'generic-c')"]


def test_a_zero_point_that_depends_on_the_batch_is_refused_in_one_line(tmp_path: Path) -> None:
    model = matmul_integer_network(MATMUL_INTEGER_CASES["batched int8 x int8, B broadcast, no zero points"]).model
    model.graph.node[0].input.extend(["", "b_zero_point"])
    model.graph.initializer.append(numpy_helper.from_array(np.zeros((6, 1, 8), np.int8), "b_zero_point"))
    status, stderr = _compile_cli(model, tmp_path)
    assert status == 2
    assert len(stderr.strip().splitlines()) == 1
    assert "node 'node' (MatMulInteger)" in stderr and "b_zero_point has shape [6, 1, 8]" in stderr
    assert "one value or one per column of B (8)" in stderr


# -- RequantizedConv as a model may carry it (this platform's fused form: x, w, [bias], mul, add) --------------------

def requantized_conv_network(depthwise: bool) -> Network:
    """A 3x3 Conv with pads 1 and its requantisation: x [1, 4, 8, 8] → 16 channels with bias and per-channel mul/add,
    or depthwise x [1, 8, 16, 16] with stride 2 and scalar mul/add."""
    rng = np.random.default_rng(37)
    if depthwise:
        x_shape, w_shape, group, strides = (1, 8, 16, 16), (8, 1, 3, 3), 8, (2, 2)
        bias, mul, add = None, np.array(5), np.array(-300)
    else:
        x_shape, w_shape, group, strides = (1, 4, 8, 8), (16, 4, 3, 3), 1, (1, 1)
        bias, mul, add = rng.integers(-3000, 3000, (16,)), rng.integers(1, 40, (16,)), rng.integers(-9000, 9000, (16,))
    pads = (1, 1, 1, 1)
    x = rng.integers(-128, 128, x_shape).astype(np.int8)
    w = rng.integers(-128, 128, w_shape)
    div = 1 << 12
    expected = requantized_conv(x, w, bias, mul, add, div, pads, strides, group)
    names = ["x", "w"] + ([] if bias is None else ["bias"]) + ["mul", "add"]
    node = helper.make_node("RequantizedConv", names, ["y"], name="node", kernel_shape=[3, 3], pads=list(pads),
                            strides=list(strides), group=group, div=float(div), n_levels=256, signed=1)
    constants = [_float_constant("w", w), _float_constant("mul", mul), _float_constant("add", add)]
    if bias is not None:
        constants.append(_float_constant("bias", bias))
    graph = helper.make_graph([node], "requantized_conv",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(expected.shape))], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"x": x}, expected.astype(np.int8), input_types={"x": INT8}, tiled_l1=1536)


@pytest.mark.parametrize("depthwise", [False, True], ids=["regular", "depthwise"])
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_requantized_conv_is_bit_exact(configuration: str, depthwise: bool, host: PluginHost, tmp_path: Path) -> None:
    # Regular: 256 bytes of x, 576 of w and 1024 of y; depthwise: 2048 of x and 512 of y; both exceed a 1.5 KiB L1.
    assert _run(requantized_conv_network(depthwise), configuration, host, tmp_path) == "Conv + RequantShift integer"


def test_a_float_declared_matmul_integer_with_zero_points_is_refused_in_one_line(tmp_path: Path) -> None:
    model = float_declared_matmul_integer_network().model
    model.graph.node[0].input.extend(["", "b_zero_point"])
    model.graph.initializer.append(_float_constant("b_zero_point", np.zeros((16,))))
    status, stderr = _compile_cli(model, tmp_path, "--input-type", "a=int8", "--input-type", "c=int8")
    assert status == 2
    assert stderr.strip().splitlines() == [
        "error: node 'mm1' (MatMulInteger): operand 'a' is declared float but the node has zero points; declare A and "
        "B int8/uint8 (ONNX's MatMulInteger) or drop the zero points (the float-declared form is read as integer "
        "MatMul)"]
