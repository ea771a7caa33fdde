"""The cluster tiles Resize along the axes it copies (ops/parsing/resize_tiles.py): with an L1 too small for the whole
tensors each layer runs in several tiles of batch and channels, the resized axes whole, and the results equal
ONNX's reference.  Both forms are here: scales, and stretched sizes (whose values a tile's smaller output
replaces on the copied axes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network


def test_linear_and_nearest_resizes_tile_over_batch_and_channels(cluster_host: PluginHost, runtime_cache: Path,
                                                                 tmp_path: Path) -> None:
    x = np.random.default_rng(5).standard_normal((2, 8, 6, 6)).astype(np.float32)
    nodes = [helper.make_node("Resize", ["x", "", "scales"], ["linear"], mode="linear"),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["nearest"], mode="nearest")]
    graph = helper.make_graph(
        nodes, "resizes", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
        [helper.make_tensor_value_info("linear", TensorProto.FLOAT, [2, 8, 12, 15]),
         helper.make_tensor_value_info("nearest", TensorProto.FLOAT, [2, 8, 9, 4])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2.5], np.float32), "scales"),
         numpy_helper.from_array(np.array([2, 8, 9, 4], np.int64), "sizes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    outputs: Any = ReferenceEvaluator(model).run(None, {"x": x})  # a list (typed loosely by onnx)
    expected = {"linear": np.asarray(outputs[0]), "nearest": np.asarray(outputs[1])}
    onnx.save(model, tmp_path / "resizes.onnx")
    _, generated = compile_model(tmp_path / "resizes.onnx",
                                 CompileOptions(platform="pulp-cluster", level_sizes={"L1": 4096}), cluster_host)
    tiles = {layer["key"]: layer["tiles"] for layer in generated.report["tiling"]["layers"]}
    assert len(tiles) == 2 and all(count > 1 for count in tiles.values()), tiles
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"x": x}, repeats=1)
    for spec, got in zip(generated.outputs, actual):
        want = expected[spec.name]
        np.testing.assert_allclose(np.reshape(got, want.shape), want, rtol=1e-5, atol=1e-6, err_msg=spec.name)
