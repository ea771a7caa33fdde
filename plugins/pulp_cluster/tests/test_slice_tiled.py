"""The cluster tiles Slice along every output axis (ops/parsing/slice_tiles.py), each tile reading the strided input
range it picks: forward, backward and strided slices of an activation several times L1, cut in many tiles with
the largest and the smallest tiles, equal to ONNX Runtime's bit for bit."""

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

SHAPE = (2, 12, 30, 20)
L1 = 6000


def _ints(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, np.int64), name)


def _model() -> onnx.ModelProto:
    slices = {  # name: (starts, ends, axes, steps), output shape
        "forward": (([1, 3], [11, 29], [1, 2], [1, 1]), [2, 10, 26, 20]),
        "backward": (([-1, 18], [-100, 0], [3, 2], [-1, -3]), [2, 12, 6, 20]),
        "strided": (([0, 2, 1], [2, 12, 20], [0, 1, 3], [1, 4, 2]), [2, 3, 30, 10]),
    }
    nodes, initializers, outputs = [], [], []
    for name, ((starts, ends, axes, steps), shape) in slices.items():
        inputs = ["x"]
        for part, values in (("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)):
            initializers.append(_ints(f"{name}_{part}", values))
            inputs.append(f"{name}_{part}")
        nodes.append(helper.make_node("Slice", inputs, [name]))
        outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, shape))
    graph = helper.make_graph(nodes, "slices", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
                              outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize(("buffering", "strategy"), [("single", "max"), ("double", "min")])
def test_slice_tiles_read_only_the_strided_range(buffering: str, strategy: str, cluster_host: PluginHost,
                                                 runtime_cache: Path, tmp_path: Path) -> None:
    model = _model()
    x = np.random.default_rng(2).standard_normal(SHAPE).astype(np.float32)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    expected: Any = session.run(None, {"x": x})
    assert 4 * x.size > 3 * L1, "the input alone is several times L1"
    onnx.save(model, tmp_path / "slices.onnx")
    _, generated = compile_model(tmp_path / "slices.onnx",
                                 CompileOptions(platform="pulp-cluster", buffering=buffering, tiling_strategy=strategy,
                                                level_sizes={"L1": L1}), cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 3 and all(count > 1 for count in tiles.values()), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"x": x}, repeats=1)
    for want, got in zip(expected, actual):
        np.testing.assert_array_equal(np.reshape(got, want.shape), want)
