"""AffineGrid beyond ONNX's node tests (float32): a float64 batch, and the refusal of a one-position axis with
align_corners (the reference divides by zero there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network


def _model(size: list[int], align_corners: int, elem_type: int) -> onnx.ModelProto:
    rank = len(size) - 2
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align_corners)
    graph = helper.make_graph(
        [node], "affine", [helper.make_tensor_value_info("theta", elem_type, [size[0], rank, rank + 1])],
        [helper.make_tensor_value_info("grid", elem_type, [size[0], *size[2:], rank])],
        [numpy_helper.from_array(np.array(size, np.int64), "size")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])


def test_float64_grids_match_the_reference(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    theta = np.random.default_rng(31).standard_normal((2, 2, 3))
    model = _model([2, 3, 4, 5], 0, TensorProto.DOUBLE)
    outputs: Any = ReferenceEvaluator(model).run(None, {"theta": theta})  # a list (typed loosely by onnx)
    onnx.save(model, tmp_path / "affine.onnx")
    _, generated = compile_model(tmp_path / "affine.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"theta": theta}, repeats=1)
    want = np.asarray(outputs[0])
    np.testing.assert_allclose(np.asarray(actual[0]).reshape(want.shape), want, rtol=1e-7, atol=1e-7)


def test_one_position_with_align_corners_is_refused(tmp_path: Path, generic_c_host: PluginHost) -> None:
    onnx.save(_model([1, 1, 1, 4], 1, TensorProto.FLOAT), tmp_path / "affine.onnx")
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(tmp_path / "affine.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    assert "align_corners=1 needs at least two positions" in error.value.nodes[0].describe()
