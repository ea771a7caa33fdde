"""Integer Gemm with ``transB = 1`` (``_dot_rows``: A's row widened to int16 once, four columns per k loop) is
bit-exact with numpy: reductions with a 16-multiple head and a tail or only a tail, column counts with groups of
four and a remainder or only a remainder, bias per column or as a matrix, int32 output, the int32 epilogue when the
bounds prove it and the int64 one when the multiplier is too large.  Each network is built with -Wall -Wextra
-Werror (the harness of ``integer_networks``); tiled builds keep the plain loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import compile_model
from deeploy_core.ir.dtypes import INT8, UINT8
from deeploy_core.plugins import PluginHost
from plugins.generic_c.tests.integer_networks import Network, float_constant, options, run_bit_exact
from deeploy_core.testing.requant_reference import requant_shift


@dataclass(frozen=True)
class RowDotCase:
    """A ``[M, K]`` runtime input times a constant ``B [N, K]`` (transB = 1)."""

    m: int
    k: int
    n: int
    op: str = "RQGemm"
    bias: str = "none"
    """``none``, ``column`` or ``matrix`` (Gemm's C as [M, N])."""
    signed_input: bool = False
    large_mul: bool = False


CASES = {
    "k=37 (32 + 5), n=10 (8 + 2), bias, uint8": RowDotCase(3, 37, 10, bias="column"),
    "k=8 tail only, n=3 remainder only, int8, int32 epilogue": RowDotCase(2, 8, 3, signed_input=True),
    "k=64, n=6, int64 epilogue": RowDotCase(4, 64, 6, bias="column", signed_input=True, large_mul=True),
    "Gemm int32 out, k=20, n=7, bias matrix": RowDotCase(5, 20, 7, op="Gemm", bias="matrix"),
    "k=640, n=128, m=1 (AnomalyDetection's first layer)": RowDotCase(1, 640, 128, bias="column"),
}


def row_dot_network(case: RowDotCase) -> Network:
    rng = np.random.default_rng(case.m * 1000 + case.k * 10 + case.n)
    low, high = (-128, 128) if case.signed_input else (0, 256)
    a = rng.integers(low, high, (case.m, case.k)).astype(np.int8 if case.signed_input else np.uint8)
    b = rng.integers(-128, 128, (case.n, case.k)).astype(np.int8)
    acc = np.asarray(a, np.int64) @ np.asarray(b, np.int64).T
    initializers = [float_constant("b", b)]
    inputs = ["a", "b"]
    if case.bias != "none":
        bias = rng.integers(-3000, 3000, (case.m, case.n) if case.bias == "matrix" else (case.n,)).astype(np.int32)
        acc = acc + bias
        initializers.append(float_constant("bias", bias))
        inputs.append("bias")
    attributes: dict[str, object] = {"transB": 1}
    if case.op == "RQGemm":
        mul = rng.integers(1 << 20, 1 << 21, (case.n,)) if case.large_mul else rng.integers(1, 40, (case.n,))
        add = rng.integers(-20000, 20000, (case.n,))
        div = (1 << 30) if case.large_mul else (1 << 12)
        expected = requant_shift(acc, mul, add, div, 256, True).astype(np.int8)
        initializers += [float_constant("mul", mul), float_constant("add", add)]
        inputs += ["add", "mul"]
        attributes.update(div=float(div), n_levels=256, signed=1)
    else:
        expected = acc.astype(np.int32)
    node = helper.make_node(case.op, inputs, ["y"], name="node", **attributes)
    graph = helper.make_graph([node], "row_dot", [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(expected.shape))],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return Network(model, {"a": a}, expected, input_types={"a": INT8 if case.signed_input else UINT8})


@pytest.mark.parametrize("case", list(CASES))
def test_row_dot_kernel_is_bit_exact(case: str, generic_c_host: PluginHost, tmp_path: Path) -> None:
    network = row_dot_network(CASES[case])
    run_bit_exact(network, generic_c_host, tmp_path)
    _, generated = compile_model(tmp_path / "network.onnx", options(network.input_types), generic_c_host)
    source = generated.files["Network.c"]
    assert "dc_a16" in source
    if CASES[case].op == "RQGemm":
        assert ("int64_t t" in source) == CASES[case].large_mul


def test_tiled_row_dot_keeps_the_plain_loop(generic_c_host: PluginHost, tmp_path: Path) -> None:
    network = row_dot_network(CASES["k=37 (32 + 5), n=10 (8 + 2), bias, uint8"])
    path = tmp_path / "network.onnx"
    onnx.save(network.model, path)
    _, generated = compile_model(path, options(network.input_types, l1=2048), generic_c_host)
    assert "dc_a16" not in generated.files["Network.c"]
