"""Dropout at inference is the identity; training with ratio 0 is too; any other training Dropout is refused.

ONNX's node tests cover inference Dropout (with and without a mask); these
cover the constant ``training_mode`` input, which they leave out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network


def _dropout(path: Path, ratio: float, training: bool) -> Path:
    node = helper.make_node("Dropout", ["x", "ratio", "training"], ["y", "mask"], name="dropout")
    graph = helper.make_graph([node], "dropout", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("mask", TensorProto.BOOL, [2, 3])],
                              initializer=[numpy_helper.from_array(np.array(ratio, np.float32), "ratio"),
                                           numpy_helper.from_array(np.array(training), "training")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)]), path)
    return path


def test_training_mode_with_ratio_zero_keeps_every_element(tmp_path: Path, generic_c_host: PluginHost,
                                                           runtime_cache: Path) -> None:
    model = _dropout(tmp_path / "dropout.onnx", 0.0, True)
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    x = np.arange(-3, 3, dtype=np.float32).reshape(2, 3) / 4
    y, mask = run_network(executable, generated, {"x": x}, repeats=1)[0]
    assert np.array_equal(y.reshape(2, 3), x) and np.asarray(mask).astype(bool).all()


def test_training_mode_with_a_nonzero_ratio_is_refused_in_one_line(tmp_path: Path,
                                                                   generic_c_host: PluginHost) -> None:
    model = _dropout(tmp_path / "dropout.onnx", 0.25, True)
    with pytest.raises(DeeployError) as error:
        compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    assert "Dropout in training mode with ratio 0.25 drops random elements" in str(error.value)
