"""The scratch-free integer matrix kernels (``_matmul_rows``: ``row`` along the output row, ``dot`` along k) are
bit-exact with numpy on the shapes they special-case: batch broadcasting, reduction lengths 1, 2, 7 and 64 (the
unrolled expression, the accumulator block, the dot product with its scalar tail), output rows that are not a
multiple of 16 or of the 64-column block, with and without bias and requantisation, transposed A in Gemm, and the
int64 epilogue when the multiplier is too large for int32.  Each network runs untiled on generic-c (-Werror builds
with -Wall -Wextra); tiled builds keep the plain loop (test_tiled_builds_keep_the_plain_loop).
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

DIV = 1 << 12


@dataclass(frozen=True)
class ProductCase:
    """One MatMul-like node: A is the runtime input, B a constant; what it computes and the kernel it must get."""

    a_shape: tuple[int, ...]
    b_shape: tuple[int, ...]
    op: str = "RQMatMul"
    bias: str = "none"
    """``none``, ``column`` (one value per output column) or, for Gemm, ``matrix``."""
    signed_input: bool = False
    large_mul: bool = False
    """A multiplier so large that the epilogue must stay int64."""
    trans_a: bool = False
    kind: str = "row"
    b_low: int = -128
    """B's least value: -127 (TFLite's symmetric weights) with int8 A lets the row kernel add products in pairs
    in 16 bits (``_matmul_rows.pairs_fit_int16``)."""
    extreme: bool = False
    """A all -128 and B all -127: every pair of products sums to 32512, the int16 bound's edge."""


CASES = {
    "k=2 batch broadcast, n=70 (64 + 6)": ProductCase((2, 3, 5, 2), (3, 2, 70), signed_input=True),
    "k=1 rank 3, n=20 (16 + 4), bias": ProductCase((2, 6, 1), (1, 20), bias="column"),
    "k=7 accumulator block, n=40 (32 + 8), bias": ProductCase((9, 7), (7, 40), bias="column"),
    "k=64 dot, n=3, int64 epilogue": ProductCase((2, 5, 64), (64, 3), signed_input=True, large_mul=True, kind="dot"),
    "MatMul int32 out, k=64, n=130 (2 blocks + 2)": ProductCase((3, 64), (64, 130), op="MatMul"),
    "Gemm int32 out, transA, k=7, n=17, bias matrix": ProductCase((7, 4), (7, 17), op="Gemm", bias="matrix",
                                                                 trans_a=True),
    "RQGemm k=66 dot, n=2, bias": ProductCase((3, 66), (66, 2), op="RQGemm", bias="column",
                                                       kind="dot"),
    "k=7 paired (3 pairs + 1), n=70, |b| <= 127": ProductCase((5, 7), (7, 70), signed_input=True, b_low=-127),
    "MatMul int32 out, k=66 paired at the int16 edge": ProductCase((2, 66), (66, 40), op="MatMul", signed_input=True,
                                                                   b_low=-127, extreme=True),
    "Gemm transA k=9 paired, n=33, bias matrix": ProductCase((9, 3), (9, 33), op="Gemm", bias="matrix", trans_a=True,
                                                             signed_input=True, b_low=-127),
}


def product_network(case: ProductCase) -> Network:
    """The node with integer operands in float tensors (QuantLib's export) and its numpy result."""
    rng = np.random.default_rng(sum(case.a_shape) * 31 + sum(case.b_shape))
    low, high = (-128, 128) if case.signed_input else (0, 256)
    a = rng.integers(low, high, case.a_shape).astype(np.int8 if case.signed_input else np.uint8)
    b = rng.integers(case.b_low, 128, case.b_shape).astype(np.int8)
    if case.extreme:
        a, b = np.full_like(a, -128), np.full_like(b, -127)
    gemm = "Gemm" in case.op
    op_a = a.T if case.trans_a else a
    acc = np.matmul(np.asarray(op_a, np.int64), np.asarray(b, np.int64))
    n = b.shape[-1]
    bias = None
    if case.bias != "none":
        bias = rng.integers(-3000, 3000, (acc.shape[-2], n) if case.bias == "matrix" else (n,)).astype(np.int32)
        acc = acc + bias
    requantised = case.op.startswith("RQ")
    initializers = [float_constant("b", b)]
    inputs = ["a", "b"]
    nodes = []
    if bias is not None and gemm:
        initializers.append(float_constant("bias", bias))
        inputs.append("bias")
    elif bias is not None:  # MatMul -> Add -> RequantShift, which the front end fuses into RequantizedMatMul
        initializers.append(float_constant("bias", bias))
        nodes.append(helper.make_node("Add", ["acc", "bias"], ["biased"], name="bias_add"))
    attributes: dict[str, object] = {"transA": 1} if case.trans_a else {}
    if requantised:
        # the channel axis: the output's columns for rank 2, its rows for rank 3, batch axis 1 above
        channels = {2: acc.shape[-1], 3: acc.shape[-2]}.get(acc.ndim, 1)
        mul = (rng.integers(1 << 20, 1 << 21, (channels,)) if case.large_mul
               else rng.integers(1, 40, (channels,)))
        add = rng.integers(-20000, 20000, (channels,))
        div = (1 << 30) if case.large_mul else DIV
        axis_1 = (-1,) + (1,) * (acc.ndim - 2) if acc.ndim > 2 else (1, -1)
        expected = requant_shift(acc, mul.reshape(axis_1) if acc.ndim > 2 else mul,
                                 add.reshape(axis_1) if acc.ndim > 2 else add, div, 256, True).astype(np.int8)
        initializers += [float_constant("mul", mul), float_constant("add", add)]
        rq = dict(div=float(div), n_levels=256, signed=1)
        if nodes:
            nodes.append(helper.make_node("RequantShift", ["biased", "mul", "add"], ["y"], name="rq", **rq))
        else:
            inputs += ["add", "mul"]
            attributes.update(rq)
    else:
        expected = acc.astype(np.int32)
    if nodes:
        nodes.insert(0, helper.make_node("MatMul", inputs, ["acc"], name="node"))
    else:
        nodes.append(helper.make_node(case.op, inputs, ["y"], name="node", **attributes))
    graph = helper.make_graph(nodes, "product", [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(expected.shape))],
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    assert gemm or not case.trans_a
    return Network(model, {"a": a}, expected, node="node_rq" if len(nodes) > 1 else "node",
                   input_types={"a": INT8 if case.signed_input else UINT8})


@pytest.mark.parametrize("case", list(CASES))
def test_matmul_rows_kernels_are_bit_exact(case: str, generic_c_host: PluginHost, tmp_path: Path) -> None:
    network = product_network(CASES[case])
    run_bit_exact(network, generic_c_host, tmp_path)
    path = tmp_path / "network.onnx"
    _, generated = compile_model(path, options(network.input_types), generic_c_host)
    source = generated.files["Network.c"]
    assert ("dc_j0" in source) == (CASES[case].kind == "row") and ("dc_acc0" in source) == (CASES[case].kind == "dot")
    assert ("int64_t t" in source) == CASES[case].large_mul
    paired = CASES[case].kind == "row" and CASES[case].signed_input and CASES[case].b_low > -128
    assert ("const dc_b1 = dc_b0" in source) == paired


def test_tiled_builds_keep_the_plain_loop(generic_c_host: PluginHost, tmp_path: Path) -> None:
    """Tiled, a MatMul keeps the plain loop (the tiler models that one); untiled it gets the row kernel."""
    network = product_network(CASES["k=7 accumulator block, n=40 (32 + 8), bias"])
    path = tmp_path / "network.onnx"
    onnx.save(network.model, path)
    sources = {}
    for configuration, l1 in (("untiled", 0), ("tiled", 2048)):
        _, generated = compile_model(path, options(network.input_types, l1), generic_c_host)
        sources[configuration] = generated.files["Network.c"]
    assert "dc_acc[" in sources["untiled"]
    assert "dc_acc[" not in sources["tiled"]
