"""The cluster tiles the generic C typed element-wise kernels (Where, Bitwise*, variadic Max, Mod) like any
element-wise layer: with an L1 too small for the whole tensors each layer runs in several tiles, every operand
broadcast into the tile's box, and the results are those of the whole tensors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network


def _info(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))


def test_where_bitwise_max_and_mod_tile_with_broadcast_operands(cluster_host: PluginHost, runtime_cache: Path,
                                                                tmp_path: Path) -> None:
    rng = np.random.default_rng(31)
    inputs = {
        "c": rng.random((16, 1, 64)) > 0.5, "x": rng.integers(-2**40, 2**40, (16, 32, 1), dtype=np.int64),
        "y": rng.integers(-2**40, 2**40, (64,), dtype=np.int64),
        "p": rng.integers(0, 2**16, (32, 64), dtype=np.uint16), "q": rng.integers(0, 2**16, (64,), dtype=np.uint16),
        "a": rng.integers(-128, 128, (96, 64), dtype=np.int8), "b": rng.integers(-128, 128, (1, 64), dtype=np.int8),
        "n": rng.integers(-5, 6, (32, 64), dtype=np.int32), "d": rng.integers(-7, 8, (64,), dtype=np.int32),
    }
    d = inputs["d"]
    expected = {
        "where": np.where(inputs["c"], inputs["x"], inputs["y"]),
        "xor": np.bitwise_xor(inputs["p"], inputs["q"]),
        "max": np.maximum(np.maximum(inputs["a"], inputs["b"]), inputs["a"]),
        "mod": np.where(d == 0, 0, np.mod(inputs["n"], np.where(d == 0, 1, d))).astype(np.int32),
    }
    nodes = [helper.make_node("Where", ["c", "x", "y"], ["where"]), helper.make_node("BitwiseXor", ["p", "q"], ["xor"]),
             helper.make_node("Max", ["a", "b", "a"], ["max"]), helper.make_node("Mod", ["n", "d"], ["mod"])]
    graph = helper.make_graph(nodes, "typed", [_info(name, value) for name, value in inputs.items()],
                              [_info(name, value) for name, value in expected.items()])
    path = tmp_path / "typed.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    _, generated = compile_model(path, CompileOptions(platform="pulp-cluster", level_sizes={"L1": 8192}), cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 4 and all(count > 1 for count in tiles.values()), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, inputs, repeats=1)
    for spec, got in zip(generated.outputs, actual):
        np.testing.assert_array_equal(np.reshape(got, expected[spec.name].shape), expected[spec.name], err_msg=spec.name)
