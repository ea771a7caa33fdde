"""VisitorPass dispatch and visiting order."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from deeploy_core.passes import Modifies, Pipeline, VisitorPass


class Recorder(VisitorPass):
    def __init__(self) -> None:
        self.visited: list[tuple[str, str]] = []

    def visit_Conv(self, graph: gs.Graph, node: gs.Node) -> Any:
        self.visited.append(("Conv", node.name))
        return f"conv with {len(node.inputs)} inputs"

    def generic_visit(self, graph: gs.Graph, node: gs.Node) -> Any:
        self.visited.append(("generic", node.name))
        return node.op


def test_dispatch_to_specific_and_generic_visit(conv_relu_graph: gs.Graph) -> None:
    recorder = Recorder()
    result = recorder.apply_pass(conv_relu_graph, {})
    assert recorder.visited == [("Conv", "conv"), ("generic", "relu"), ("generic", "add")]
    assert result == {"conv": "conv with 2 inputs", "relu": "Relu", "add": "Add"}


class OnlyConv(VisitorPass):
    def visit_Conv(self, graph: gs.Graph, node: gs.Node) -> Any:
        return node.inputs[1].values.shape


def test_default_generic_visit_returns_nothing(conv_relu_graph: gs.Graph) -> None:
    assert OnlyConv().apply_pass(conv_relu_graph, {}) == {"conv": (2, 1, 1, 1)}
    assert OnlyConv().modifies() == Modifies.Nothing


class NoValues(VisitorPass):
    def visit_Relu(self, graph: gs.Graph, node: gs.Node) -> None:
        return None


def test_returns_none_when_no_values(conv_relu_graph: gs.Graph) -> None:
    assert NoValues().apply_pass(conv_relu_graph, {}) is None


class OddNames(VisitorPass):
    def visit_My_Op_2(self, graph: gs.Graph, node: gs.Node) -> Any:
        return "odd"


def test_op_type_with_characters_invalid_in_identifiers(chain_graph: Any) -> None:
    graph = chain_graph(["My.Op-2", "Relu"])
    assert OddNames().apply_pass(graph, {}) == {"n0": "odd"}


def test_topological_order_without_mutating_graph(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Conv", "Sigmoid", "Conv"])
    graph.nodes.reverse()
    before = list(graph.nodes)
    recorder = Recorder()
    recorder.apply_pass(graph, {})
    assert [name for _, name in recorder.visited] == ["n0", "n1", "n2", "n3"]
    assert len(graph.nodes) == len(before)
    assert all(a is b for a, b in zip(graph.nodes, before, strict=True))


def test_order_is_stable_among_independent_nodes() -> None:
    x = gs.Variable("x", dtype=np.float32, shape=(1,))
    a = gs.Variable("a", dtype=np.float32, shape=(1,))
    b = gs.Variable("b", dtype=np.float32, shape=(1,))
    y = gs.Variable("y", dtype=np.float32, shape=(1,))
    join = gs.Node("Add", name="join", inputs=[a, b], outputs=[y])
    right = gs.Node("Sigmoid", name="right", inputs=[x], outputs=[b])
    left = gs.Node("Relu", name="left", inputs=[x], outputs=[a])
    graph = gs.Graph(nodes=[join, right, left], inputs=[x], outputs=[y])
    recorder = Recorder()
    recorder.apply_pass(graph, {})
    # Independent nodes keep their relative graph order (right before left).
    assert [name for _, name in recorder.visited] == ["right", "left", "join"]


def test_outer_tensor_used_in_subgraph_orders_producer_first() -> None:
    x = gs.Variable("x", dtype=np.float32, shape=(1,))
    cond = gs.Variable("cond", dtype=np.bool_, shape=())
    outer = gs.Variable("outer", dtype=np.float32, shape=(1,))
    y = gs.Variable("y", dtype=np.float32, shape=(1,))

    def branch(name: str) -> gs.Graph:
        out = gs.Variable(f"{name}_out", dtype=np.float32, shape=(1,))
        node = gs.Node("Identity", name=f"{name}_id", inputs=[outer], outputs=[out])
        return gs.Graph(nodes=[node], outputs=[out], name=name)

    if_node = gs.Node(
        "If",
        name="if",
        inputs=[cond],
        outputs=[y],
        attrs={"then_branch": branch("then"), "else_branch": branch("else")},
    )
    producer = gs.Node("Relu", name="producer", inputs=[x], outputs=[outer])
    graph = gs.Graph(nodes=[if_node, producer], inputs=[x, cond], outputs=[y])
    recorder = Recorder()
    recorder.apply_pass(graph, {})
    assert [name for _, name in recorder.visited] == ["producer", "if"]


def test_cycle_is_rejected() -> None:
    a = gs.Variable("a", dtype=np.float32, shape=(1,))
    b = gs.Variable("b", dtype=np.float32, shape=(1,))
    first = gs.Node("Relu", name="first", inputs=[b], outputs=[a])
    second = gs.Node("Relu", name="second", inputs=[a], outputs=[b])
    graph = gs.Graph(nodes=[first, second], outputs=[b])
    with pytest.raises(ValueError, match="cycle"):
        Recorder().apply_pass(graph, {})


def test_duplicate_node_names_with_values_are_rejected(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Conv"])
    for node in graph.nodes:
        node.name = "same"
    with pytest.raises(ValueError, match="same"):
        Recorder().apply_pass(graph, {})


def test_visitor_in_pipeline(conv_relu_graph: gs.Graph) -> None:
    results: dict[str, Any] = {}
    Pipeline([OnlyConv()]).apply_pass(conv_relu_graph, results)
    assert results == {"OnlyConv": {"conv": (2, 1, 1, 1)}}
