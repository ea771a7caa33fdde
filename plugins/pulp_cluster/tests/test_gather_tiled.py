"""The cluster tiles Gather along every output axis (ops/parsing/gather_tiles.py), reading the gathered data axis whole:
an embedding lookup whose table, indices and output together are several times L1 runs in tiles of tokens and of
embedding columns, with token ids given at run time (int64 and int32) and with constant indices along an inner axis;
the results equal ONNX Runtime's bit for bit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

VOCABULARY, EMBEDDING, TOKENS = 40, 96, 64
L1 = 8000
"""Bytes: the table alone is 15,360 bytes; one embedding column of it (160 bytes) and a few tokens fit many times."""


def _model(index_type: int) -> onnx.ModelProto:
    table = np.random.default_rng(3).standard_normal((VOCABULARY, EMBEDDING)).astype(np.float32)
    picks = np.array([[5, 0, 2], [1, 1, 7]], np.int64)
    nodes = [helper.make_node("Gather", ["table", "ids"], ["embedded"], axis=0),
             helper.make_node("Gather", ["embedded", "picks"], ["picked"], axis=2)]
    graph = helper.make_graph(
        nodes, "lookup", [helper.make_tensor_value_info("ids", index_type, [1, TOKENS])],
        [helper.make_tensor_value_info("embedded", TensorProto.FLOAT, [1, TOKENS, EMBEDDING]),
         helper.make_tensor_value_info("picked", TensorProto.FLOAT, [1, TOKENS, 2, 3])],
        [numpy_helper.from_array(table, "table"), numpy_helper.from_array(picks, "picks")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("index_type", "buffering"), [(TensorProto.INT64, "single"), (TensorProto.INT32, "double")])
def test_gather_tiles_over_tokens_and_columns(index_type: int, buffering: str, cluster_host: PluginHost,
                                              runtime_cache: Path, tmp_path: Path) -> None:
    model = _model(index_type)
    numpy_type = np.int64 if index_type == TensorProto.INT64 else np.int32
    ids = np.random.default_rng(11).integers(0, VOCABULARY, (1, TOKENS)).astype(numpy_type)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs: Any = session.run(None, {"ids": ids})
    onnx.save(model, tmp_path / "lookup.onnx")
    _, generated = compile_model(tmp_path / "lookup.onnx",
                                 CompileOptions(platform="pulp-cluster", buffering=buffering, level_sizes={"L1": L1}),
                                 cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 2 and all(count > 1 for count in tiles.values()), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"ids": ids}, repeats=1)
    for want, got in zip(outputs, actual):
        np.testing.assert_array_equal(np.reshape(got, want.shape), want)


def test_a_scalar_index_drops_its_axis_and_still_tiles(cluster_host: PluginHost, runtime_cache: Path,
                                                       tmp_path: Path) -> None:
    """A scalar index (an LSTM's last step: ``Gather(sequence, 7, axis=1)``) removes the gathered axis from the
    output; the tiles follow the remaining axes (a tiling of this shape once indexed past the output's rank)."""
    steps = np.random.default_rng(4).standard_normal((2, 8, 600)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gather", ["steps", "last"], ["final"], axis=1)], "last_step",
        [helper.make_tensor_value_info("steps", TensorProto.FLOAT, list(steps.shape))],
        [helper.make_tensor_value_info("final", TensorProto.FLOAT, [2, 600])],
        [numpy_helper.from_array(np.array(7, np.int64), "last")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, tmp_path / "last_step.onnx")
    _, generated = compile_model(tmp_path / "last_step.onnx",
                                 CompileOptions(platform="pulp-cluster", level_sizes={"L1": 8000}), cluster_host)
    assert generated.report["tiling"]["layers"][0]["tiles"] > 1
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"steps": steps}, repeats=1)
    np.testing.assert_array_equal(np.reshape(actual[0], (2, 600)), steps[:, 7, :])
