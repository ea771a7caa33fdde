"""SubgraphTransformation and OpChainPattern."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from deeploy_core.passes import (
    Modifies,
    OpChainPattern,
    Pass,
    Pipeline,
    Subgraph,
    SubgraphTransformation,
)


def fuse(graph: gs.Graph, subgraph: Subgraph, op: str) -> None:
    """Replace the chain by one node with the chain's inputs and outputs."""
    first, last = subgraph.node(0), subgraph.node(len(subgraph.nodes) - 1)
    fused = gs.Node(
        op,
        name="+".join(node.name for node in subgraph.nodes),
        inputs=list(first.inputs),
        outputs=list(last.outputs),
    )
    for node in subgraph.nodes:
        node.outputs.clear()
    # Appended at the end on purpose: the driver re-sorts the graph.
    graph.nodes.append(fused)


class FuseConvRelu(OpChainPattern):
    pattern = ("Conv", "Relu")

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        fuse(graph, subgraph, "ConvRelu")


class FuseConvReluSigmoid(OpChainPattern):
    pattern = ("Conv", "Relu", "Sigmoid")

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        fuse(graph, subgraph, "ConvReluSigmoid")


def names(candidates: Iterable[Subgraph]) -> list[list[str]]:
    return [[node.name for node in subgraph.nodes] for subgraph in candidates]


def test_matches_chains_in_graph_order(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu", "Sigmoid", "Conv", "Relu", "Conv"])
    assert names(FuseConvRelu().find_candidates(graph)) == [["n0", "n1"], ["n3", "n4"]]
    assert names(FuseConvReluSigmoid().find_candidates(graph)) == [["n0", "n1", "n2"]]


def test_skips_intermediate_with_two_consumers(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu", "Conv", "Relu"])
    # n2's output also feeds an extra Sigmoid: n2 -> n3 is not a private edge.
    extra_out = gs.Variable("extra", dtype=np.float32, shape=(1, 4))
    graph.nodes.append(
        gs.Node("Sigmoid", name="extra", inputs=[graph.nodes[2].outputs[0]], outputs=[extra_out])
    )
    graph.outputs.append(extra_out)
    assert names(FuseConvRelu().find_candidates(graph)) == [["n0", "n1"]]


def test_skips_intermediate_that_is_a_graph_output(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu"])
    graph.outputs.append(graph.nodes[0].outputs[0])
    assert names(FuseConvRelu().find_candidates(graph)) == []
    assert FuseConvRelu().apply_pass(graph, {}) is None


def test_consumer_reading_the_tensor_twice_counts_once(conv_relu_graph: gs.Graph) -> None:
    class ReluAdd(OpChainPattern):
        pattern = ("Relu", "Add")

        def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
            raise AssertionError("not applied in this test")

    assert names(ReluAdd().find_candidates(conv_relu_graph)) == [["relu", "add"]]


def test_ignores_consumers_removed_from_the_graph(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu"])
    # A dangling, not yet cleaned-up consumer of the Conv output.
    stale = gs.Node(
        "Sigmoid",
        name="stale",
        inputs=[graph.nodes[0].outputs[0]],
        outputs=[gs.Variable("s", dtype=np.float32)],
    )
    assert all(node is not stale for node in graph.nodes)
    assert names(FuseConvRelu().find_candidates(graph)) == [["n0", "n1"]]


def test_applies_until_fixpoint_and_counts(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu", "Sigmoid", "Conv", "Relu"])
    output = graph.outputs[0]
    assert FuseConvRelu().apply_pass(graph, {}) == 2
    # Dangling nodes were cleaned up and the graph is topologically sorted
    # although the fused nodes were appended at the end.
    assert [node.op for node in graph.nodes] == ["ConvRelu", "Sigmoid", "ConvRelu"]
    assert [node.name for node in graph.nodes] == ["n0+n1", "n2", "n3+n4"]
    assert graph.outputs[0] is output
    assert graph.nodes[2].outputs[0] is output
    # Nothing left to do.
    assert FuseConvRelu().apply_pass(graph, {}) is None


def test_rematches_on_the_rewritten_graph(chain_graph: Any) -> None:
    class CollapseRelus(OpChainPattern):
        """Relu -> Relu becomes a single Relu, which may match again."""

        pattern = ("Relu", "Relu")

        def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
            fuse(graph, subgraph, "Relu")

    graph = chain_graph(["Relu"] * 5)
    assert CollapseRelus().apply_pass(graph, {}) == 4
    assert [node.op for node in graph.nodes] == ["Relu"]


def test_can_be_applied_filters_candidates(chain_graph: Any) -> None:
    class OnlyFromN3(FuseConvRelu):
        def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
            return subgraph.node(0).name == "n3"

    graph = chain_graph(["Conv", "Relu", "Sigmoid", "Conv", "Relu"])
    assert OnlyFromN3().apply_pass(graph, {}) == 1
    assert [node.op for node in graph.nodes] == ["Conv", "Relu", "Sigmoid", "ConvRelu"]


class ReluForever(OpChainPattern):
    """Replaces every Relu by a fresh Relu: never reaches a fixpoint."""

    pattern = ("Relu",)
    max_applications: ClassVar[int] = 5

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        fuse(graph, subgraph, "Relu")


def test_max_applications_guard(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    with pytest.raises(RuntimeError, match="ReluForever.*5"):
        ReluForever().apply_pass(graph, {})


def test_exactly_max_applications_is_allowed(chain_graph: Any) -> None:
    class AtMostTwo(FuseConvRelu):
        max_applications: ClassVar[int] = 2

    graph = chain_graph(["Conv", "Relu", "Conv", "Relu"])
    assert AtMostTwo().apply_pass(graph, {}) == 2
    graph = chain_graph(["Conv", "Relu"] * 3)
    with pytest.raises(RuntimeError, match="AtMostTwo"):
        AtMostTwo().apply_pass(graph, {})


def test_default_max_applications_and_modifies() -> None:
    assert SubgraphTransformation.max_applications == 10_000
    assert FuseConvRelu().modifies() == Modifies.Everything


def test_missing_pattern_is_an_error(chain_graph: Any) -> None:
    class NoPattern(OpChainPattern):
        def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
            pass

    with pytest.raises(TypeError, match="NoPattern"):
        NoPattern().apply_pass(chain_graph(["Relu"]), {})


def test_subgraph_identity_semantics(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu"])
    conv, relu = graph.nodes
    twin = chain_graph(["Conv", "Relu"]).nodes  # equal by value, other objects
    match = Subgraph((conv, relu))
    assert match.node(0) is conv and match.node(1) is relu
    assert match == Subgraph((conv, relu))
    assert hash(match) == hash(Subgraph((conv, relu)))
    assert match != Subgraph(tuple(twin))
    assert len({match, Subgraph((conv, relu)), Subgraph(tuple(twin))}) == 2


class ListGraph:
    """A graph without cleanup/toposort: the driver must not require them."""

    def __init__(self, items: list[int]) -> None:
        self.items = items


class DropNegatives(SubgraphTransformation):
    def find_candidates(self, graph: Any) -> Iterable[Subgraph]:
        return [Subgraph((item,)) for item in graph.items]

    def can_be_applied(self, graph: Any, subgraph: Subgraph) -> bool:
        return bool(subgraph.node(0) < 0)

    def apply(self, graph: Any, subgraph: Subgraph) -> None:
        graph.items.remove(subgraph.node(0))


def test_graph_without_cleanup_or_toposort() -> None:
    graph = ListGraph([3, -1, 4, -1, -5])
    assert DropNegatives().apply_pass(graph, {}) == 3  # type: ignore[arg-type]
    assert graph.items == [3, 4]


class CountOps(Pass[gs.Graph]):
    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def should_reapply(self, modified: Modifies) -> bool:
        return bool(modified & Modifies.Nodes)

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> list[str]:
        return [node.op for node in graph.nodes]


class ReportOps(Pass[gs.Graph]):
    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        return {CountOps}

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> str:
        return ",".join(pipeline_results["CountOps"])


def test_transformation_in_pipeline_invalidates_analyses(chain_graph: Any) -> None:
    graph = chain_graph(["Conv", "Relu", "Sigmoid"])
    pipeline = Pipeline([CountOps(), FuseConvRelu(), ReportOps()])
    result = pipeline.apply_pass(graph, {})
    assert result == {
        "CountOps": ["ConvRelu", "Sigmoid"],
        "FuseConvRelu": 1,
        "ReportOps": "ConvRelu,Sigmoid",
    }
    assert pipeline.last_run == ["CountOps", "FuseConvRelu", "CountOps", "ReportOps"]
