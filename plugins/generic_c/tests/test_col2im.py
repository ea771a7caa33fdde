"""Col2Im beyond ONNX's node tests (float32, symmetric pads): float64, overlapping blocks, uneven pads.

Overlapping blocks (stride below the dilated block) add several columns into
one image element, in the reference's order, so float64 results must equal
``onnx.reference``'s exactly; pads that differ before and after an axis move
the block positions asymmetrically.
"""

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


def test_overlapping_blocks_with_uneven_pads_sum_as_the_reference_in_float64(
        tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    # image 4 x 5, block 2 x 3, strides (1, 2), pads (1, 0) before and (0, 2) after: 4 x 3 positions
    x = np.random.default_rng(31).standard_normal((2, 3 * 6, 12))
    node = helper.make_node("Col2Im", ["x", "image", "block"], ["y"], strides=[1, 2], pads=[1, 0, 0, 2])
    graph = helper.make_graph(
        [node], "col2im", [helper.make_tensor_value_info("x", TensorProto.DOUBLE, list(x.shape))],
        [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [2, 3, 4, 5])],
        [numpy_helper.from_array(np.array([4, 5], np.int64), "image"),
         numpy_helper.from_array(np.array([2, 3], np.int64), "block")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    outputs: Any = ReferenceEvaluator(model).run(None, {"x": x})  # a list (typed loosely by onnx)
    want = np.asarray(outputs[0])
    onnx.save(model, tmp_path / "col2im.onnx")
    _, generated = compile_model(tmp_path / "col2im.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {"x": x}, repeats=1)
    assert np.array_equal(np.asarray(actual[0]).reshape(want.shape), want)
