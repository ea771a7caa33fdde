"""A type refusal that a float-declared graph input causes is reported as that input's problem.

The platform-free parts: the type checker names the float tensors an integer
binding refuses (with the exact type it declares), and the failure report walks
back from such a tensor to the graph input whose type flows into it.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from deeploy_core.ir.dtypes import FLOAT32, INT8, UINT8
from deeploy_core.mapping import NodeMismatch, NodeTypeChecker
from deeploy_core.mapping.mismatch import IntegerWanted
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.float_inputs import FloatInputError, explain_failures
from deeploy_core.midend.unsupported import UnsupportedModelError, UnsupportedNode


def _chain(first_op: str) -> tuple[gs.Graph, gs.Node]:
    """x (float32) → ``first_op`` → Kernel → y, with the kernel last."""
    x = gs.Variable("x", np.float32, [1, 4])
    middle = gs.Variable("m", np.float32, [1, 4])
    y = gs.Variable("y", np.float32, [1, 4])
    kernel = gs.Node("Kernel", "kernel", inputs=[middle], outputs=[y])
    graph = gs.Graph(nodes=[gs.Node(first_op, "first", inputs=[x], outputs=[middle]), kernel], inputs=[x], outputs=[y])
    return graph, kernel


def _failure(node: gs.Node, mismatch_source: NodeTypeChecker | NodeMismatch, graph: gs.Graph) -> UnsupportedNode:
    ctxt = build_context(graph)
    if isinstance(mismatch_source, NodeMismatch):
        mismatch = mismatch_source.mismatch
    else:
        mismatch = mismatch_source.refusal(node, ctxt)
        assert mismatch is not None
    return UnsupportedNode(node.name, node.op, (mismatch,))


def test_type_checker_names_the_float_inputs_an_integer_binding_refuses() -> None:
    graph, kernel = _chain("Transpose")
    ctxt = build_context(graph)
    refusal = NodeTypeChecker((UINT8,), (None,)).refusal(kernel, ctxt)
    assert refusal is not None and refusal.parsed and refusal.category == "dtype"
    assert refusal.reason == "input 0 is float32, the kernel takes uint8"
    assert refusal.wants_integer == (IntegerWanted("m", UINT8),)
    assert NodeTypeChecker((FLOAT32,), (None,)).refusal(kernel, ctxt) is None
    graph.inputs[0].dtype = np.float64
    float_only = NodeTypeChecker((FLOAT32,), (FLOAT32,)).refusal(graph.nodes[0], build_context(graph))
    assert float_only is not None and float_only.wants_integer == (), "a float kernel refusing float64 wants no integer"


def test_a_refusal_behind_a_type_preserving_op_names_the_input_and_the_kernels_own_type() -> None:
    graph, kernel = _chain("Transpose")
    error = explain_failures("p", graph, build_context(graph), [_failure(kernel, NodeTypeChecker((UINT8,), (None,)), graph)])
    assert isinstance(error, FloatInputError)
    assert (error.input_name, error.wanted, error.node.node) == ("x", UINT8, "kernel")
    text = str(error)
    assert text.startswith("input 'x' is float32 but feeds node 'kernel' (Kernel), an integer kernel;")
    assert "--input-type x=uint8 or" in text and "--input-types-from SAMPLE.npz" in text
    assert "\n" not in text and error.details == ()


def test_a_kernel_that_takes_any_integer_gets_int8_suggested_with_the_unsigned_hint() -> None:
    graph, kernel = _chain("MaxPool")
    refused = NodeMismatch("dtype", "input 0 is float32, the integer kernel takes an integer type", wants_integer=["m"])
    error = explain_failures("p", graph, build_context(graph), [_failure(kernel, refused, graph)])
    assert isinstance(error, FloatInputError) and error.wanted is None
    assert "--input-type x=int8 (uint8 for data in 0…255)" in str(error)


def test_names_that_need_quoting_are_quoted_for_the_shell() -> None:
    graph, kernel = _chain("Identity")
    graph.inputs[0].name = "my input"
    error = explain_failures("p", graph, build_context(graph), [_failure(kernel, NodeTypeChecker((INT8,), (None,)), graph)])
    assert "--input-type 'my input=int8'" in str(error)


@pytest.mark.parametrize("first_op", ["Softmax", "Exp"])
def test_an_op_without_an_integer_type_rule_stops_the_walk(first_op: str) -> None:
    """An integer input type would never reach the kernel through a float-only op: not the input's fault."""
    graph, kernel = _chain(first_op)
    error = explain_failures("p", graph, build_context(graph), [_failure(kernel, NodeTypeChecker((INT8,), (None,)), graph)])
    assert type(error) is UnsupportedModelError
    assert "input 'x'" not in str(error) and "'kernel' (Kernel)" in str(error)


def test_an_integer_declared_input_is_not_blamed() -> None:
    graph, kernel = _chain("Transpose")
    graph.inputs[0].dtype = np.int16
    graph.nodes[0].outputs[0].dtype = np.float32
    error = explain_failures("p", graph, build_context(graph), [_failure(kernel, NodeTypeChecker((INT8,), (None,)), graph)])
    assert type(error) is UnsupportedModelError


def test_other_unsupported_nodes_stay_listed_beneath() -> None:
    graph, kernel = _chain("Transpose")
    other = UnsupportedNode("first", "Transpose", ())
    error = explain_failures("p", graph, build_context(graph),
                             [other, _failure(kernel, NodeTypeChecker((INT8,), (None,)), graph)])
    assert isinstance(error, FloatInputError)
    assert error.details == ("node 'first' (Transpose): op Transpose is not supported on this platform",)
