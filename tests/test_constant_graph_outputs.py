"""Graph outputs whose value folds to a constant still reach the user's output buffer (issue 31).

Lowering's constant folding turned such an output into an initializer produced by no node, and the
context builder refused the model ("graph output 'y' is not produced by any node"); it now keeps the
value and copies it out through an ``Identity``.  ``Shape`` with ``start``/``end`` is folded by us, since
onnx-graphsurgeon's shape folding ignores both attributes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.lowering.static_shape_nodes import shape_slice
from deeploy_core.plugins import PluginHost


@pytest.fixture(scope="module")
def host() -> PluginHost:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_generic_c import plugin as generic_c_plugin  # type: ignore[import-not-found]

    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return plugins


@pytest.mark.parametrize(("start", "end", "expected"), [
    (0, None, [2, 3, 4]), (1, None, [3, 4]), (-1, None, [4]), (0, -1, [2, 3]), (-10, 10, [2, 3, 4]), (2, 1, []),
])
def test_shape_slices_as_onnx_defines(start: int, end: int | None, expected: list[int]) -> None:
    assert shape_slice([2, 3, 4], start, end) == expected


def test_constant_outputs_are_written_next_to_computed_ones(tmp_path: Path, host: PluginHost) -> None:
    """A Shape slice, a Constant and an Identity of a weight as outputs; the weight also feeds a computed output."""
    weight = helper.make_tensor("w", TensorProto.FLOAT, [3, 4], np.arange(12, dtype=np.float32).tolist())
    nodes = [
        helper.make_node("Shape", ["x"], ["dims"], name="dims", start=1),
        helper.make_node("Constant", [], ["fixed"], name="fixed",
                         value=helper.make_tensor("v", TensorProto.INT32, [2], [7, -7])),
        helper.make_node("Identity", ["w"], ["weight"], name="weight"),
        helper.make_node("Add", ["x", "weight"], ["y"], name="add"),
    ]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4]),
               helper.make_tensor_value_info("dims", TensorProto.INT64, [2]),
               helper.make_tensor_value_info("fixed", TensorProto.INT32, [2]),
               helper.make_tensor_value_info("weight", TensorProto.FLOAT, [3, 4])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
                              outputs, initializer=[weight])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    _, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    assert {c.name for c in result.comparisons} >= {"y", "dims", "fixed", "weight"}
