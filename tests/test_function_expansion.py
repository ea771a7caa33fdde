"""Ops without a kernel are expanded into their ONNX function bodies before mapping (issue 31).

The expansion alone is checked with onnx's reference evaluator (same outputs before and after, attributes and their
schema defaults substituted, context-dependent bodies built from the node); through the compiler, a ``Mish`` node
(no generic-c kernel) compiles to its primitives and matches ONNX Runtime, while an op with a kernel (``Celu``) is
never expanded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.lowering.function_expansion import expand_functions
from deeploy_core.plugins import PluginHost


def _model(op: str, attributes: dict[str, Any] | None = None, opset: int = 24) -> onnx.ModelProto:
    node = helper.make_node(op, ["x"], ["y"], name=f"the_{op.lower()}", **(attributes or {}))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _outputs(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    return np.asarray(ReferenceEvaluator(model).run(None, {"x": x})[0])  # type: ignore[index]


X = np.linspace(-3.0, 3.0, 10, dtype=np.float32).reshape(2, 5)


@pytest.mark.parametrize(("op", "attributes"), [
    ("Celu", {"alpha": 0.5}),       # an attribute the body references
    ("Celu", {}),                   # the schema's default (alpha = 1) written for the body
    ("Shrink", {"bias": 0.5, "lambd": 1.0}),
    ("Mish", {}),
    ("HardSwish", {}),
])
def test_expanded_body_computes_what_the_op_does(op: str, attributes: dict[str, Any]) -> None:
    model = _model(op, attributes)
    reference = _outputs(model, X)
    expanded = expand_functions(model, mapped=set())
    assert expanded[0].op == op and expanded[0].name == f"the_{op.lower()}"  # then ops of its body that have bodies
    assert op not in {node.op_type for node in model.graph.node}
    assert not model.functions and {item.domain for item in model.opset_import} == {""}
    np.testing.assert_allclose(_outputs(model, X), reference, rtol=1e-6, atol=1e-6)


def test_mapped_ops_are_never_expanded() -> None:
    model = _model("Celu")
    assert expand_functions(model, mapped={"Celu"}) == []
    assert [node.op_type for node in model.graph.node] == ["Celu"]


def test_expansion_is_deterministic() -> None:
    first, second = _model("Mish"), _model("Mish")
    expand_functions(first, mapped=set())
    expand_functions(second, mapped=set())
    assert first.SerializeToString() == second.SerializeToString()


@pytest.fixture(scope="module")
def host() -> PluginHost:
    pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
    from deeploy_generic_c import plugin as generic_c_plugin  # type: ignore[import-not-found]

    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    return plugins


def test_an_op_without_kernel_compiles_through_its_body_and_a_kernel_wins(tmp_path: Path, host: PluginHost) -> None:
    nodes = [helper.make_node("Mish", ["x"], ["m"], name="mish"), helper.make_node("Celu", ["m"], ["y"], name="celu")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)]), path)
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    ops = [layer["op"] for layer in generated.report["layers"]]
    assert "Mish" not in ops and "Celu" in ops and "Softplus" in ops and "Tanh" in ops, ops


@pytest.mark.parametrize("condition", [True, False])
def test_an_if_with_a_constant_condition_runs_its_taken_branch(tmp_path: Path, host: PluginHost,
                                                               condition: bool) -> None:
    """Both branches read the outer ``x`` and use the same inner name; only the taken one is compiled."""
    def branch(op: str) -> onnx.GraphProto:
        return helper.make_graph([helper.make_node(op, ["x"], ["inner"], name="inner"),
                                  helper.make_node("Neg", ["inner"], ["out"], name="out")], op,
                                 [], [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 5])])
    nodes = [helper.make_node("Constant", [], ["cond"], value=helper.make_tensor("c", TensorProto.BOOL, [], [condition])),
             helper.make_node("If", ["cond"], ["y"], name="choose", then_branch=branch("Relu"),
                              else_branch=branch("Sigmoid"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)]), path)
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    ops = [layer["op"] for layer in generated.report["layers"]]
    assert ops == ["Relu" if condition else "Sigmoid", "Neg"], ops


def test_shape_and_size_of_static_tensors_become_constants_with_start_and_end() -> None:
    """onnx-graphsurgeon's folding ignores Shape's start/end (Attention's body reads Shape(Q, start=-1))."""
    from deeploy_core.lowering.static_shape_values import fold_static_shape_values

    nodes = [helper.make_node("Shape", ["x"], ["last"], start=-1), helper.make_node("Shape", ["x"], ["all"]),
             helper.make_node("Shape", ["x"], ["middle"], start=1, end=-1), helper.make_node("Size", ["x"], ["n"])]
    outputs = [helper.make_tensor_value_info(name, TensorProto.INT64, None) for name in ("last", "all", "middle", "n")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5])], outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
    assert fold_static_shape_values(model) == 4
    assert {node.op_type for node in model.graph.node} == {"Constant"}
    values = ReferenceEvaluator(model).run(None, {"x": np.zeros((2, 3, 5), np.float32)})
    assert [np.asarray(value).tolist() for value in values] == [[5], [2, 3, 5], [3], 30]


def test_a_reshape_to_a_sliced_shape_compiles(tmp_path: Path, host: PluginHost) -> None:
    """Reshape(x, Concat([-1], Shape(x, start=-1))): the lowering folds the sliced shape, not the whole one."""
    minus_one = helper.make_tensor("minus_one", TensorProto.INT64, [1], [-1])
    nodes = [helper.make_node("Shape", ["x"], ["last"], start=-1, name="last"),
             helper.make_node("Concat", ["minus_one", "last"], ["target"], axis=0, name="target"),
             helper.make_node("Reshape", ["x", "target"], ["y"], name="flatten")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [6, 5])], [minus_one])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)]), path)
    generated, result = validate_model(path, CompileOptions(platform="generic-c"), host, repeats=1)
    assert result.ok and [spec.shape for spec in generated.outputs] == [(6, 5)]
