"""Scan with a static sequence length is unrolled into body copies: states carried, inputs sliced, outputs stacked.

The body adds each slice to a running state and also emits the state times
two; the scan input runs backwards (direction 1) and the scan output is
stacked along axis 1 in reverse (direction 1), so slicing order, stacking
axis and both directions all show in the result, compared with onnx's
ONNX Runtime after compiling on generic-c.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.scan_unroll import unroll_scans
from deeploy_core.plugins import PluginHost


def _scan_model(opset: int = 17) -> onnx.ModelProto:
    body = helper.make_graph(
        [helper.make_node("Add", ["state_in", "slice"], ["state_out"]),
         helper.make_node("Mul", ["state_out", "two"], ["doubled"])],
        "body",
        [helper.make_tensor_value_info("state_in", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("slice", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("doubled", TensorProto.FLOAT, [3])],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    scan = helper.make_node("Scan", ["init", "x"], ["final", "stacked"], name="scan", body=body, num_scan_inputs=1,
                            scan_input_axes=[1], scan_input_directions=[1], scan_output_axes=[1],
                            scan_output_directions=[1])
    graph = helper.make_graph([scan], "scan", [helper.make_tensor_value_info("init", TensorProto.FLOAT, [3]),
                                               helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("final", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("stacked", TensorProto.FLOAT, [3, 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_an_unrolled_scan_equals_the_reference(tmp_path: Path) -> None:
    model = _scan_model()
    path = tmp_path / "scan.onnx"
    onnx.save(model, path)
    rng = np.random.default_rng(0)
    feeds = {"init": rng.standard_normal(3).astype(np.float32), "x": rng.standard_normal((3, 4)).astype(np.float32)}
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), PluginHost.discover(), feeds,
                                           None, atol=1e-6, rtol=1e-6)  # ONNX Runtime (onnx.reference lacks directions)
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    assert "Scan" not in {layer["op"] for layer in generated.report["layers"]}


def test_the_unrolled_graph_has_one_body_copy_per_step() -> None:
    model = _scan_model()
    assert unroll_scans(model, 17) == 1
    ops = [node.op_type for node in model.graph.node]
    assert ops.count("Add") == 4 and ops.count("Gather") == 4 and ops.count("Concat") == 1


def test_a_scan_8_is_refused_in_one_line() -> None:
    with pytest.raises(ModelImportError, match=r"\(Scan\): cannot be unrolled: Scan-8"):
        unroll_scans(_scan_model(opset=8), 8)
