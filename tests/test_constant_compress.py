"""Compress with a constant condition after another node: its output length comes from the condition (issue 31).

ONNX's inference leaves the compressed axis unknown, so the static-shape check refused the output; the front end
rewrites such a Compress as a Gather of the selected indices (on the flattened input without ``axis``).
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.frontend.constant_compress import compress_to_gather
from deeploy_core.plugins import PluginHost


@pytest.fixture(scope="module")
def host() -> PluginHost:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_generic_c import plugin as generic_c_plugin  # type: ignore[import-not-found]

    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return plugins


def _relu_compress(axis: int | None) -> onnx.ModelProto:
    """Relu -> Compress; the condition is shorter than the axis (the rest is dropped) and a Constant node."""
    condition = helper.make_tensor("c", TensorProto.BOOL, [3], [True, False, True])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Constant", [], ["cond"], name="cond", value=condition),
             helper.make_node("Compress", ["r", "cond"], ["y"], name="compress",
                              **({} if axis is None else {"axis": axis}))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n"] if axis is None else ["m", "n"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


@pytest.mark.parametrize("axis", [1, -2, None])
def test_compress_of_an_intermediate_tensor_compiles_and_matches(tmp_path: Path, host: PluginHost,
                                                                 axis: int | None) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_relu_compress(axis), path)
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert "Gather" in [layer["op"] for layer in generated.report["layers"]]


def test_a_condition_that_is_not_constant_is_left_alone() -> None:
    model = _relu_compress(1)
    del model.graph.node[1]  # the condition becomes a graph input, known only at run time
    model.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, [3]))
    inferred = onnx.shape_inference.infer_shapes(model).graph
    assert compress_to_gather(model, inferred) == 0
    assert [node.op_type for node in model.graph.node] == ["Relu", "Compress"]
