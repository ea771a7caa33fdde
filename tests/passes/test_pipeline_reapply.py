"""When the pipeline reruns a pass and when it reuses the earlier result."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs
import pytest

from deeploy_core.passes import Modifies, Pass, Pipeline, PipelineResults

LOG: list[str] = []


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    LOG.clear()


class CountNodes(Pass[gs.Graph]):
    """Analysis whose result only depends on the set of nodes."""

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def should_reapply(self, modified: Modifies) -> bool:
        return bool(modified & Modifies.Nodes)

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int:
        LOG.append(self.name)
        return len(graph.nodes)


class Reader(Pass[gs.Graph]):
    """Consumes CountNodes; default (conservative) should_reapply."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        return {CountNodes}

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int:
        LOG.append(self.name)
        return int(pipeline_results["CountNodes"])


class TagNodes(Pass[gs.Graph]):
    """Sets an attribute on untagged nodes; only attributes change."""

    def modifies(self) -> Modifies:
        return Modifies.Attributes

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        LOG.append(self.name)
        untagged = [node for node in graph.nodes if "tag" not in node.attrs]
        for node in untagged:
            node.attrs["tag"] = 1
        return len(untagged) or None


class AppendIdentity(Pass[gs.Graph]):
    """Appends one Identity node after the graph output (once)."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        LOG.append(self.name)
        if any(node.op == "Identity" for node in graph.nodes):
            return None
        old_output = graph.outputs[0]
        new_output = gs.Variable("identity_out", dtype=np.float32, shape=old_output.shape)
        graph.nodes.append(
            gs.Node("Identity", name="identity", inputs=[old_output], outputs=[new_output])
        )
        graph.outputs = [new_output]
        return 1


class ClaimsNodesButDoesNothing(Pass[gs.Graph]):
    """Could modify nodes, but this time changed nothing (returns None)."""

    def modifies(self) -> Modifies:
        return Modifies.Everything

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> None:
        LOG.append(self.name)
        return None


def test_analysis_not_rerun_after_unrelated_modification(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu", "Relu"])
    results: dict[str, Any] = {}
    returned = Pipeline([Reader("before"), TagNodes(), Reader("after")]).apply_pass(graph, results)
    # TagNodes modified only Attributes; CountNodes only cares about Nodes.
    assert LOG == ["CountNodes", "before", "TagNodes", "after"]
    assert all(node.attrs["tag"] == 1 for node in graph.nodes)
    assert returned == {"CountNodes": 3, "before": 3, "TagNodes": 3, "after": 3}


def test_analysis_rerun_after_relevant_modification(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu", "Relu"])
    results: dict[str, Any] = {}
    Pipeline([Reader("before"), AppendIdentity(), Reader("after")]).apply_pass(graph, results)
    assert LOG == ["CountNodes", "before", "AppendIdentity", "CountNodes", "after"]
    assert len(graph.nodes) == 4
    assert results["before"] == 3
    assert results["after"] == 4
    assert results["CountNodes"] == 4  # the latest result replaces the stale one


def test_pass_returning_none_triggers_no_rerun(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results: dict[str, Any] = {}
    Pipeline([Reader("before"), ClaimsNodesButDoesNothing(), Reader("after")]).apply_pass(
        graph, results
    )
    assert LOG == ["CountNodes", "before", "ClaimsNodesButDoesNothing", "after"]
    assert "ClaimsNodesButDoesNothing" not in results


def test_transformation_that_changed_nothing_is_not_rerun(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results = PipelineResults()
    pipeline = Pipeline([AppendIdentity(), TagNodes()])
    assert pipeline.apply_pass(graph, results) == {"AppendIdentity": 1, "TagNodes": 2}
    assert LOG == ["AppendIdentity", "TagNodes"]
    # AppendIdentity is stale (TagNodes modified attributes after it), so it
    # reruns, finds nothing to do and returns None; TagNodes is up to date.
    LOG.clear()
    assert pipeline.apply_pass(graph, results) is None
    assert LOG == ["AppendIdentity"]
    assert pipeline.last_run == ["AppendIdentity"]
    # Now nothing changed since either ran: the pipeline is at a fixpoint.
    LOG.clear()
    assert pipeline.apply_pass(graph, results) is None
    assert LOG == []
    assert pipeline.last_run == []


def test_default_should_reapply_is_conservative(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu"])
    results = PipelineResults()
    Pipeline([Reader("reader")]).apply_pass(graph, results)
    LOG.clear()
    Pipeline([TagNodes(), Reader("reader")]).apply_pass(graph, results)
    # Reader (default should_reapply) reruns after any change; CountNodes,
    # which only cares about nodes, does not.
    assert LOG == ["TagNodes", "reader"]


def test_modified_since_bookkeeping(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results = PipelineResults()
    Pipeline([CountNodes(), TagNodes(), ClaimsNodesButDoesNothing()]).apply_pass(graph, results)
    assert results.modified_since == {
        "CountNodes": Modifies.Attributes,
        "TagNodes": Modifies.Nothing,
        "ClaimsNodesButDoesNothing": Modifies.Nothing,
    }
    Pipeline([AppendIdentity()]).apply_pass(graph, results)
    changed = Modifies.Nodes | Modifies.Edges | Modifies.Tensors
    assert results.modified_since["CountNodes"] == Modifies.Attributes | changed
    assert results.modified_since["TagNodes"] == changed
    assert results.modified_since["AppendIdentity"] == Modifies.Nothing
