"""Empty graph outputs of ops whose result may be empty compile; other empty tensors are still refused (issue 31).

A Slice past the end of a run-time input gives an output holding nothing: it becomes an empty constant (no kernel),
next to an ordinary output.  A convolution whose kernel is larger than its input stays a model error.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.tensor_limits import check_tensors
from deeploy_core.plugins import PluginHost


@pytest.fixture(scope="module")
def host() -> PluginHost:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_generic_c import plugin as generic_c_plugin  # type: ignore[import-not-found]

    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return plugins


def _bounds(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def test_a_slice_past_the_end_is_an_empty_output(tmp_path: Path, host: PluginHost) -> None:
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["tail"], name="past_the_end"),
             helper.make_node("Relu", ["x"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4]),
                               helper.make_tensor_value_info("tail", TensorProto.FLOAT, [3, 0])],
                              initializer=[_bounds("starts", [10]), _bounds("ends", [20]), _bounds("axes", [1])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert "Slice" not in [layer["op"] for layer in generated.report["layers"]]


def test_an_empty_output_of_a_convolution_is_still_refused() -> None:
    weights = numpy_helper.from_array(np.zeros((3, 2, 3, 3), dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="wide_conv")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 0, 0])],
                              initializer=[weights])
    with pytest.raises(ModelImportError, match="wide_conv.*empty tensors are not supported"):
        check_tensors(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]))
