"""The cluster tiles Pad as a window over its output (ops/parsing/pad_tiles.py): with an L1 far too small for the whole
tensors each Pad runs in many tiles, tiles that lie wholly in the padding included, and the results equal ONNX
Runtime's.  Constant mode is cut along every axis (negative pads, which crop, and an ``axes`` input too); reflect
and edge modes only along the axes they leave alone.  The ``min`` strategy (smallest tiles) makes whole tiles of
padding certain: nine rows of it above the input, twelve columns after it."""

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

SHAPE = (1, 6, 20, 18)
L1 = 10000
"""Bytes: a reflect or edge Pad needs one channel's whole input and output (3,740 bytes) per tile, twice when double
buffered; every layer's whole tensors need 22,440 bytes or more."""


def _pads(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _model() -> onnx.ModelProto:
    nodes = [
        helper.make_node("Pad", ["x", "wide", "fill"], ["constant"], mode="constant"),
        helper.make_node("Pad", ["x", "cropping"], ["cropped"], mode="constant"),
        helper.make_node("Pad", ["x", "spatial", "", "hw"], ["on_axes"], mode="constant"),
        helper.make_node("Pad", ["x", "spatial", "", "hw"], ["reflected"], mode="reflect"),
        helper.make_node("Pad", ["x", "spatial", "", "hw"], ["edged"], mode="edge"),
    ]
    initializers = [
        _pads("wide", [0, 1, 9, 3, 0, 2, 7, 12]),  # 9 rows and 12 columns of padding: whole tiles of it
        _pads("cropping", [0, 0, -3, 2, 0, -1, 4, -5]),
        _pads("spatial", [2, 3, 1, 4]),
        _pads("hw", [2, -1]),
        numpy_helper.from_array(np.array(1.5, np.float32), "fill"),
    ]
    shapes = {"constant": [1, 9, 36, 33], "cropped": [1, 5, 21, 15], "on_axes": [1, 6, 23, 25],
              "reflected": [1, 6, 23, 25], "edged": [1, 6, 23, 25]}
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in shapes.items()]
    graph = helper.make_graph(nodes, "pads", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


@pytest.mark.parametrize(("buffering", "strategy"), [("single", "max"), ("double", "min")])
def test_pad_tiles_as_a_window_over_its_output(buffering: str, strategy: str, cluster_host: PluginHost, runtime_cache: Path,
                                               tmp_path: Path) -> None:
    model = _model()
    x = np.random.default_rng(7).standard_normal(SHAPE).astype(np.float32)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    outputs: Any = session.run(None, {"x": x})  # onnx's reference evaluator refuses negative pads
    expected = {value.name: np.asarray(output) for value, output in zip(model.graph.output, outputs)}
    onnx.save(model, tmp_path / "pads.onnx")
    _, generated = compile_model(tmp_path / "pads.onnx", CompileOptions(platform="pulp-cluster", buffering=buffering,
                                                                        tiling_strategy=strategy,
                                                                        level_sizes={"L1": L1}), cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 5 and all(count > 1 for count in tiles.values()), tiles
    whole = 4 * (np.prod(SHAPE) + max(array.size for array in expected.values()))
    assert whole > L1, "the whole tensors would not fit: tiling is what makes this compile"
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"x": x}, repeats=1)
    for spec, got in zip(generated.outputs, actual):
        want = expected[spec.name]
        np.testing.assert_array_equal(np.reshape(got, want.shape), want, err_msg=spec.name)
