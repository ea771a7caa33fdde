"""Chains of float element-wise layers fused into one loop (lowering_elementwise, ops/elementwise/fused.py) match ONNX
Runtime bit for bit, keep their intermediates out of the arena, and stop where fusing would lose a value or let a
compiler contract a product and a sum.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost


def _constant(name: str, values: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


def _model(path: Path, nodes: list[onnx.NodeProto], shape: tuple[int, ...], outputs: list[str],
           initializers: list[onnx.TensorProto]) -> Path:
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name in outputs],
                              initializers)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def _run(model: Path, x: np.ndarray, host: PluginHost, cache: Path) -> str:
    generated, result = validate_with_data(model, CompileOptions(platform="generic-c"), host, {"x": x}, atol=0.0,
                                           cache_dir=cache)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    return generated.files["Network.c"]


def _fused_layers(code: str) -> list[str]:
    return re.findall(r"/\* layer \d+: (\w+) ", code)


def _quant_chain(prefix: str, source: str) -> list[onnx.NodeProto]:
    """Div → Add → Round → Clip → Sub → Mul with the constants ``<prefix>_s``, ``_z``, ``_lo``, ``_hi``, ``_d``, ``_m``."""
    p = prefix
    return [
        helper.make_node("Div", [source, f"{p}_s"], [f"{p}_div"]),
        helper.make_node("Add", [f"{p}_div", f"{p}_z"], [f"{p}_add"]),
        helper.make_node("Round", [f"{p}_add"], [f"{p}_round"]),
        helper.make_node("Clip", [f"{p}_round", f"{p}_lo", f"{p}_hi"], [f"{p}_clip"]),
        helper.make_node("Sub", [f"{p}_clip", f"{p}_d"], [f"{p}_sub"]),
        helper.make_node("Mul", [f"{p}_sub", f"{p}_m"], [f"{p}_mul"]),
    ]


def _quant_constants(prefix: str, rng: np.random.Generator, shapes: dict[str, tuple[int, ...]]) -> list[onnx.TensorProto]:
    p = prefix
    return [
        _constant(f"{p}_s", rng.uniform(0.01, 0.2, size=shapes.get("s", ()))),
        _constant(f"{p}_z", rng.uniform(-3.0, 3.0, size=shapes.get("z", ())).round()),
        _constant(f"{p}_lo", np.float32(-128.0)),
        _constant(f"{p}_hi", np.float32(127.0)),
        _constant(f"{p}_d", rng.uniform(-3.0, 3.0, size=shapes.get("d", ())).round()),
        _constant(f"{p}_m", rng.uniform(0.01, 0.2, size=shapes.get("m", ()))),
    ]


@pytest.mark.parametrize("shapes", [
    {},
    {"s": (3, 1), "z": (4,), "d": (2, 1, 1), "m": (1, 3, 4)},
    {"s": (2, 3, 4), "m": (1,)},
], ids=["scalars", "broadcast", "full_and_one"])
def test_fused_chain_matches_onnx_runtime_bit_for_bit(shapes: dict[str, tuple[int, ...]], tmp_path: Path,
                                                      generic_c_host: PluginHost, runtime_cache: Path) -> None:
    rng = np.random.default_rng(len(shapes))
    # Two quantiser chains back to back, then ops with the constant as the left operand and Max/Min/Pow.
    nodes = _quant_chain("q", "x") + _quant_chain("r", "q_mul") + [
        helper.make_node("Div", ["k_div", "r_mul"], ["t_div"]),  # Mul then Sub would be cut (see the last test)
        helper.make_node("Sub", ["k_sub", "t_div"], ["t_sub"]),
        helper.make_node("Max", ["k_max", "t_sub"], ["t_max"]),
        helper.make_node("Min", ["t_max", "k_min"], ["t_min"]),
        helper.make_node("Clip", ["t_min", "", "k_hi"], ["y"]),
    ]
    constants = _quant_constants("q", rng, shapes) + _quant_constants("r", rng, {}) + [
        _constant("k_sub", rng.normal(size=(4,))), _constant("k_div", np.float32(3.0)),
        _constant("k_max", rng.normal(size=(3, 1))), _constant("k_min", np.float32(0.75)),
        _constant("k_hi", np.float32(0.5)),
    ]
    model = _model(tmp_path / "chain.onnx", nodes, (2, 3, 4), ["y"], constants)
    x = (rng.normal(size=(2, 3, 4)) * 20).astype(np.float32)
    x.reshape(-1)[:4] = [0.5, -0.5, 2.5, -0.0]  # halves round to even, a negative zero keeps its sign
    code = _run(model, x, generic_c_host, runtime_cache)
    assert _fused_layers(code) == ["FusedElementwise"]
    assert "q_round" not in code and "r_add" not in code  # intermediates are neither buffers nor in the arena


def test_second_consumer_and_graph_output_end_a_chain(tmp_path: Path, generic_c_host: PluginHost,
                                                      runtime_cache: Path) -> None:
    rng = np.random.default_rng(7)
    nodes = _quant_chain("q", "x") + [
        # q_round is read twice: the chain before it fuses, the readers start their own layers.
        helper.make_node("Mul", ["q_mul", "k2"], ["a"]),
        helper.make_node("Add", ["a", "q_round"], ["b"]),  # two variable operands: not fusable
        helper.make_node("Div", ["b", "k3"], ["out1"]),  # a graph output that is also read on
        helper.make_node("Sub", ["out1", "k4"], ["c"]),
        helper.make_node("Round", ["c"], ["out2"]),
    ]
    constants = _quant_constants("q", rng, {"m": (4,)}) + [
        _constant("k2", np.float32(1.5)), _constant("k3", rng.uniform(1, 2, size=(3, 1))), _constant("k4", np.float32(0.25)),
    ]
    model = _model(tmp_path / "broken.onnx", nodes, (2, 3, 4), ["out1", "out2"], constants)
    x = (rng.normal(size=(2, 3, 4)) * 20).astype(np.float32)
    code = _run(model, x, generic_c_host, runtime_cache)
    # Div+Add+Round fused (Round's output is read twice), Clip+Sub+Mul+Mul fused, the two-operand Add alone,
    # Div alone (its output is a graph output), Sub+Round fused.
    assert _fused_layers(code) == ["FusedElementwise", "FusedElementwise", "Add", "Div", "FusedElementwise"]


def test_a_product_and_a_following_sum_stay_apart(tmp_path: Path, generic_c_host: PluginHost,
                                                  runtime_cache: Path) -> None:
    """Fused, ``v * a + b`` may become one fused multiply-add (one rounding) where the layers round twice."""
    nodes = [helper.make_node("Mul", ["x", "a"], ["p"]), helper.make_node("Add", ["p", "b"], ["s"]),
             helper.make_node("Round", ["s"], ["y"])]
    model = _model(tmp_path / "fma.onnx", nodes, (16,), ["y"], [_constant("a", np.float32(0.3)), _constant("b", np.float32(0.1))])
    x = np.random.default_rng(3).normal(size=(16,)).astype(np.float32) * 10
    code = _run(model, x, generic_c_host, runtime_cache)
    assert _fused_layers(code) == ["Mul", "FusedElementwise"]


def test_round_first_keeps_the_select_and_tiles_split_a_fused_chain(tmp_path: Path) -> None:
    """A chain that starts with Clip and Round (its input may be any bit pattern, so Round keeps the unfused
    select), with constants broadcast along two axes, tiled into L1 boxes of a few rows: bit-exact with ONNX
    Runtime through the command line (tiling re-parses the fused layer with each tile's shapes)."""
    import subprocess
    import sys

    import onnxruntime as ort

    rng = np.random.default_rng(11)
    nodes = [helper.make_node("Clip", ["x", "lo", ""], ["c"]), helper.make_node("Round", ["c"], ["r"]),
             helper.make_node("Div", ["r", "s"], ["d"]), helper.make_node("Sub", ["k", "d"], ["y"])]
    constants = [_constant("lo", np.float32(-40.0)), _constant("s", rng.uniform(0.5, 2.0, size=(6, 1))),
                 _constant("k", rng.normal(size=(16,)))]
    model = _model(tmp_path / "tiled.onnx", nodes, (4, 6, 16), ["y"], constants)
    x = (rng.normal(size=(4, 6, 16)) * 30).astype(np.float32)
    x.reshape(-1)[:5] = [0.5, -0.5, 1.5, -2.5, 8388609.0]
    expected = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.savez(tmp_path / "inputs.npz", x=x)
    np.savez(tmp_path / "outputs.npz", y=expected)
    cli = Path(sys.executable).with_name("deeploy-core")
    result = subprocess.run([str(cli), "validate", str(model), "--inputs", str(tmp_path / "inputs.npz"),
                             "--outputs", str(tmp_path / "outputs.npz"), "--platform", "generic-c", "--l1", "1000",
                             "--atol", "0", "--build-dir", str(tmp_path / "out")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    code = (tmp_path / "out" / "Network.c").read_text()
    assert _fused_layers(code) == ["FusedElementwise"]
    assert "copysignf(r, v)" in code
