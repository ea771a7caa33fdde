"""Layers written as loops with their own shapes (ops/kernels/loops.py) match ONNX Runtime, and a build links only the
kernels a network calls.

Binary element-wise operators, Clip, Round and small MatMul/Gemm no longer call
a runtime kernel: the generated code loops over the layer's constant shapes
(one loop per dimension of the collapsed broadcast space).  Each broadcasting
pattern of ranks 1 to 6 is checked exactly against ONNX Runtime (the four
arithmetic operators round correctly, max/min are exact), Round on every kind
of value (halves, -0.3, magnitudes past 2^23, subnormals), and small products with
batch broadcasting and every Gemm transposition within float tolerance.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost

BINARY = ("Add", "Sub", "Mul", "Div", "Max", "Min")

BROADCASTS = [
    ((7,), (7,)),
    ((5,), (1,)),
    ((1,), (2, 3)),
    ((4, 1), (1, 6)),
    ((2, 3, 4), (3, 1)),
    ((2, 1, 3, 4), (1, 5, 1, 4)),
    ((2, 3, 1, 2, 3), (3, 4, 1, 1)),
    ((1, 2, 3, 1, 2, 2), (2, 1, 3, 1, 2, 1)),
    ((2, 2, 1, 3, 1, 2), (2, 2)),
]


def _save(path: Path, nodes: list[onnx.NodeProto], inputs: dict[str, tuple[int, ...]],
          outputs: dict[str, tuple[int, ...]], initializers: list[onnx.TensorProto] = ()) -> Path:
    graph = helper.make_graph(
        nodes, "loops", [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in inputs.items()],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in outputs.items()],
        list(initializers))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _validate(model: Path, inputs: dict[str, np.ndarray], host: PluginHost, cache: Path, atol: float) -> str:
    """Validate ``model`` against ONNX Runtime; returns the generated Network.c."""
    generated, result = validate_with_data(model, CompileOptions(platform="generic-c"), host, inputs, atol=atol,
                                           cache_dir=cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    return generated.files["Network.c"]


@pytest.mark.parametrize(("a_shape", "b_shape"), BROADCASTS, ids=lambda shape: "x".join(map(str, shape)))
def test_broadcasting_binary_loops_match_onnx_runtime_exactly(a_shape: tuple[int, ...], b_shape: tuple[int, ...],
                                                              tmp_path: Path, generic_c_host: PluginHost,
                                                              runtime_cache: Path) -> None:
    out_shape = tuple(np.broadcast_shapes(a_shape, b_shape))
    nodes = [helper.make_node(op, ["a", "b"], [f"y_{op}"], name=op) for op in BINARY]
    model = _save(tmp_path / "binary.onnx", nodes, {"a": a_shape, "b": b_shape},
                  {f"y_{op}": out_shape for op in BINARY})
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    inputs = {"a": rng.normal(size=a_shape).astype(np.float32),
              "b": (rng.normal(size=b_shape) + 3.0).astype(np.float32)}
    code = _validate(model, inputs, generic_c_host, runtime_cache, atol=0.0)
    assert "_bcast_f32(" not in code and not re.search(r"dcg_(add|sub|mul|div|max|min)\w*\(", code)
    loops = max(len(re.findall(r"for \(int32_t i\d", block)) for block in code.split("static void")[1:])
    assert loops <= len(out_shape)


def test_round_and_clip_loops_match_onnx_runtime_bit_for_bit(tmp_path: Path, generic_c_host: PluginHost,
                                                              runtime_cache: Path) -> None:
    values = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -0.3, -0.0, 0.49999997, 8388607.5, 8388609.0, 3e9, -3e9,
                       3.4e38, -3.4e38, 1e-40, -2.5000002, 126.5, 127.5, -128.5, 4.4], dtype=np.float32)
    nodes = [helper.make_node("Round", ["x"], ["r"], name="round"),
             helper.make_node("Clip", ["r", "lo", "hi"], ["y"], name="clip"),
             helper.make_node("Clip", ["x", "", "hi"], ["z"], name="clip_high_only")]
    initializers = [numpy_helper.from_array(np.array(-128.0, np.float32), "lo"),
                    numpy_helper.from_array(np.array(127.0, np.float32), "hi")]
    model = _save(tmp_path / "round.onnx", nodes, {"x": values.shape}, {"r": values.shape, "y": values.shape,
                                                                        "z": values.shape}, initializers)
    generated, result = validate_with_data(model, CompileOptions(platform="generic-c"), generic_c_host,
                                           {"x": values}, atol=0.0, cache_dir=runtime_cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    rounded = result.outputs[0]
    assert np.array_equal(np.signbit(rounded), np.signbit(np.rint(values)))  # -0.3 rounds to -0.0
    assert "nearbyintf" not in generated.files["Network.c"] and "dcg_clip_f32" not in generated.files["Network.c"]


@pytest.mark.parametrize(("a_shape", "b_shape"), [
    ((4, 16), (16, 32)), ((3, 1, 4, 5), (2, 5, 6)), ((2, 3, 4), (4,)), ((5,), (5, 3)), ((2, 1, 3, 8), (1, 4, 8, 2)),
])
def test_small_matmul_loops_match_onnx_runtime(a_shape: tuple[int, ...], b_shape: tuple[int, ...], tmp_path: Path,
                                               generic_c_host: PluginHost, runtime_cache: Path) -> None:
    out_shape = np.matmul(np.zeros(a_shape), np.zeros(b_shape)).shape
    model = _save(tmp_path / "matmul.onnx", [helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
                  {"a": a_shape, "b": b_shape}, {"y": out_shape})
    rng = np.random.default_rng(3)
    code = _validate(model, {"a": rng.normal(size=a_shape).astype(np.float32),
                             "b": rng.normal(size=b_shape).astype(np.float32)}, generic_c_host, runtime_cache, 1e-5)
    assert "dcg_matmul_f32" not in code


@pytest.mark.parametrize("trans_a", [0, 1])
@pytest.mark.parametrize("trans_b", [0, 1])
@pytest.mark.parametrize(("c_shape", "alpha", "beta"), [(None, 1.0, 1.0), ((6,), 0.5, 2.0), ((3, 1), 1.0, -1.0),
                                                         ((3, 6), 1.5, 1.0), ((6,), 2.0, 0.0), (None, 0.25, 1.0)])
def test_small_gemm_loops_match_onnx_runtime(trans_a: int, trans_b: int, c_shape: tuple[int, ...] | None, alpha: float,
                                             beta: float, tmp_path: Path, generic_c_host: PluginHost,
                                             runtime_cache: Path) -> None:
    m, k, n = 3, 5, 6
    rng = np.random.default_rng(trans_a * 2 + trans_b)
    a = rng.normal(size=(k, m) if trans_a else (m, k)).astype(np.float32)
    weights = [numpy_helper.from_array(rng.normal(size=(n, k) if trans_b else (k, n)).astype(np.float32), "w")]
    names = ["a", "w"]
    if c_shape is not None:
        weights.append(numpy_helper.from_array(rng.normal(size=c_shape).astype(np.float32), "c"))
        names.append("c")
    node = helper.make_node("Gemm", names, ["y"], name="gemm", transA=trans_a, transB=trans_b, alpha=alpha, beta=beta)
    model = _save(tmp_path / "gemm.onnx", [node], {"a": a.shape}, {"y": (m, n)}, weights)
    code = _validate(model, {"a": a}, generic_c_host, runtime_cache, 1e-5)
    assert "dcg_gemm_f32" not in code


def test_a_linked_program_holds_only_the_kernels_the_network_calls(tmp_path: Path, generic_c_host: PluginHost) -> None:
    """The library's kernel files define whole families; the folder compiles each function into its own section
    and its programs link with --gc-sections, so a program keeps exactly the kernels Network.c names."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Softmax", ["r"], ["s"], name="softmax", axis=-1),
             helper.make_node("Add", ["s", "x"], ["y"], name="add")]
    model = _save(tmp_path / "net.onnx", nodes, {"x": (2, 8)}, {"y": (2, 8)})
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    folder = tmp_path / "out"
    generated.write(folder)
    (folder / "main.c").write_text('#include "Network.h"\nint main(void) { InitNetwork(); RunNetwork(); return 0; }\n')
    subprocess.run(["make", "-s", "-C", str(folder), "program", "PROGRAM=prog", "PROGRAM_SRCS=main.c"], check=True)

    def kernels(path: Path) -> set[str]:
        listing = subprocess.run(["nm", "--defined-only", str(path)], capture_output=True, text=True, check=True).stdout
        return {line.split()[2] for line in listing.splitlines() if re.match(r"\S+ [Tt] dcg_", line)}

    called = set(re.findall(r"\bdcg_\w+(?=\()", generated.files["Network.c"]))
    assert called == {"dcg_relu_f32", "dcg_softmax_f32"}
    assert kernels(folder / "prog") == called
    assert kernels(folder / "libnetwork.a") > called | {"dcg_layernorm_f32", "dcg_sigmoid_f32"}
