"""Size, ConstantOfShape, EyeLike and Range at run time, for the types and values ONNX's node tests leave out.

The node tests fill with float32 and int32 only and step Range in range; here
ConstantOfShape fills float16 and the extreme int64, EyeLike writes bool with
a diagonal below the main one, and an int64 Range whose declared length (the
output's length is fixed at compile time) runs past int64's maximum wraps
like numpy's arithmetic, built with UBSan so signed overflow would fail the run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

SANITIZED = ("-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")
"""The flags of test_cast.py, so both share one sanitised build of the runtime."""


def _model(path: Path) -> Path:
    nodes = [
        helper.make_node("ConstantOfShape", ["shape"], ["halves"], name="halves",
                         value=numpy_helper.from_array(np.array([-2.5], np.float16))),
        helper.make_node("ConstantOfShape", ["shape"], ["lowest"], name="lowest",
                         value=numpy_helper.from_array(np.array([np.iinfo(np.int64).min], np.int64))),
        helper.make_node("EyeLike", ["square"], ["eye"], name="eye", k=-1, dtype=TensorProto.BOOL),
        helper.make_node("Range", ["start", "limit", "delta"], ["steps"], name="steps"),
        helper.make_node("Size", ["square"], ["count"], name="count"),
    ]
    inputs = [helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
              helper.make_tensor_value_info("square", TensorProto.FLOAT, [3, 4]),
              helper.make_tensor_value_info("start", TensorProto.INT64, []),
              helper.make_tensor_value_info("limit", TensorProto.INT64, []),
              helper.make_tensor_value_info("delta", TensorProto.INT64, [])]
    outputs = [helper.make_tensor_value_info("halves", TensorProto.FLOAT16, [2, 3]),
               helper.make_tensor_value_info("lowest", TensorProto.INT64, [2, 3]),
               helper.make_tensor_value_info("eye", TensorProto.BOOL, [3, 4]),
               helper.make_tensor_value_info("steps", TensorProto.INT64, [3]),
               helper.make_tensor_value_info("count", TensorProto.INT64, [])]
    graph = helper.make_graph(nodes, "generators", inputs, outputs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def test_generators_fill_every_type_and_range_wraps(tmp_path: Path, generic_c_host: PluginHost,
                                                   runtime_cache: Path) -> None:
    _, generated = compile_model(_model(tmp_path / "generators.onnx"), CompileOptions(platform="generic-c"),
                                 generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(SANITIZED), runtime_cache)
    top = np.iinfo(np.int64).max
    feeds: dict[str, np.ndarray] = {"shape": np.array([2, 3], np.int64), "square": np.zeros((3, 4), np.float32),
             "start": np.array(top - 1, np.int64), "limit": np.array(top, np.int64), "delta": np.array(1, np.int64)}
    halves, lowest, eye, steps, count = run_network(executable, generated, feeds, repeats=1)[0]
    assert np.array_equal(np.asarray(halves).reshape(-1), np.full(6, -2.5, np.float16))
    assert np.array_equal(np.asarray(lowest).reshape(-1), np.full(6, np.iinfo(np.int64).min))
    assert np.array_equal(np.asarray(eye).reshape(3, 4).astype(bool), np.eye(3, 4, k=-1, dtype=bool))
    with np.errstate(over="ignore"):
        assert np.array_equal(np.asarray(steps).reshape(-1), np.int64(top - 1) + np.arange(3, dtype=np.int64))
    assert int(np.asarray(count).reshape(-1)[0]) == 12
