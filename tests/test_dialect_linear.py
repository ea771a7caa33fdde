"""Linear ops of Deeploy's dialect (issue 19, item 2) on generic-c and pulp-cluster, bit-exact with numpy.

``RQGemm``/``RQMatMul`` are exported the way Deeploy writes its fused forms (default domain, no ONNX schema,
float-declared tensors holding integers, ``add`` before ``mul``); ``MatMulInteger`` both as ONNX defines it
(int8/uint8 tensors, zero points per tensor, per row of A or per column of B; checked against ONNX Runtime and
ONNX's backend node test too) and as QuantLib exports use it (float-declared, no zero points: Deeploy's alias
of integer MatMul).  Every network runs untiled, tiled into an L1 smaller than its tensors with single and double
buffering, and on the 8-core cluster; the C is built with -Werror and must reproduce ``tests/dialect_reference/linear.py``
exactly.
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
from tests.dialect_reference.linear import matmul_integer, rq_gemm, rq_matmul

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


def rq_gemm_network(with_bias: bool, trans_b: bool, signed: bool) -> Network:
    """A [24, 16] @ B [16, 32] (stored transposed with transB), optional bias C [32], per-column add/mul or scalars."""
    rng = np.random.default_rng(19)
    m, k, n = 24, 16, 32
    a = rng.integers(-128, 128, (m, k)).astype(np.int8)
    b = rng.integers(-128, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    c = rng.integers(-5000, 5000, (n,)).astype(np.int32) if with_bias else None
    if with_bias:
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
    "bias, transB, per-column, signed": (True, True, True),
    "no bias, scalar, unsigned": (False, False, False),
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
    # 384 bytes of A, 512 of B and 768 of Y (with C, mul and add) exceed a 1.5 KiB L1.
    assert _run(rq_gemm_network(*RQ_GEMM_CASES[case]), configuration, host, tmp_path) == "RQGemm integer"


@pytest.mark.parametrize("per_channel", [True, False], ids=["per channel", "scalar"])
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_rq_matmul_is_bit_exact(configuration: str, per_channel: bool, host: PluginHost, tmp_path: Path) -> None:
    # 1024 bytes of A, 128 of B and 512 of Y exceed a 1.5 KiB L1 (per-channel parameters: only the batch is cut).
    assert _run(rq_matmul_network(per_channel), configuration, host, tmp_path) == "RQMatMul integer"
