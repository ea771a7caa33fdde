"""The cluster tiles the generic C row ops and new reductions along their kept axes (AlongAxes): with an L1 too
small for the whole tensor each layer runs in several tiles, every tile holding whole rows, and the results
are those of the whole tensor."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network


def test_log_softmax_reduce_l2_and_rms_norm_tile_into_whole_rows(cluster_host: PluginHost, runtime_cache: Path,
                                                                  tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((64, 48)).astype(np.float32)
    scale = np.linspace(0.5, 1.5, 48, dtype=np.float32)
    shifted = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    squares = (x.astype(np.float64) ** 2).sum(axis=1, keepdims=True)
    expected = {
        "log_softmax": shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True)),
        "l2": np.sqrt(squares).reshape(64),
        "rms": x / np.sqrt(squares / 48 + 1e-5) * scale,
    }
    nodes = [helper.make_node("LogSoftmax", ["x"], ["log_softmax"], axis=1),
             helper.make_node("ReduceL2", ["x", "axes"], ["l2"], keepdims=0),
             helper.make_node("RMSNormalization", ["x", "scale"], ["rms"])]
    graph = helper.make_graph(nodes, "rows", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 48])],
                              [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape))
                               for name, value in expected.items()],
                              [numpy_helper.from_array(np.array([1], dtype=np.int64), "axes"),
                               numpy_helper.from_array(scale, "scale")])
    path = tmp_path / "rows.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]), path)
    _, generated = compile_model(path, CompileOptions(platform="pulp-cluster", level_sizes={"L1": 8192}), cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 3 and all(count > 1 for count in tiles.values()), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"x": x}, repeats=1)
    for spec, got in zip(generated.outputs, actual):
        np.testing.assert_allclose(np.reshape(got, expected[spec.name].shape), expected[spec.name], rtol=1e-5,
                                   atol=1e-5, err_msg=spec.name)
