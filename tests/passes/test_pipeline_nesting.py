"""Pipelines nested in pipelines share results and staleness bookkeeping."""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs
import pytest

from deeploy_core.passes import Modifies, Pass, Pipeline, PipelineResults

LOG: list[str] = []


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    LOG.clear()


class Logged(Pass[gs.Graph]):
    def __init__(self, name: str | None = None) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name or type(self).__name__


class OpCensus(Logged):
    """Analysis: op type of every node; reapplies only when nodes change."""

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def should_reapply(self, modified: Modifies) -> bool:
        return bool(modified & Modifies.Nodes)

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> list[str]:
        LOG.append(self.name)
        return [node.op for node in graph.nodes]


class UsesCensus(Logged):
    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        return {OpCensus}

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int:
        LOG.append(self.name)
        return len(pipeline_results["OpCensus"])


class ReluToSigmoid(Logged):
    """Replaces the op type of Relu nodes: a Nodes modification."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        LOG.append(self.name)
        relus = [node for node in graph.nodes if node.op == "Relu"]
        for node in relus:
            node.op = "Sigmoid"
        return len(relus) or None


class SetAlpha(Logged):
    """Attribute-only modification."""

    def modifies(self) -> Modifies:
        return Modifies.Attributes

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        LOG.append(self.name)
        fresh = [node for node in graph.nodes if "alpha" not in node.attrs]
        for node in fresh:
            node.attrs["alpha"] = 0.5
        return len(fresh) or None


def test_inner_results_visible_to_outer_without_rerun(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu"])
    inner = Pipeline([OpCensus(), SetAlpha()], name="inner")
    outer = Pipeline([inner, UsesCensus()], name="outer")
    results: dict[str, Any] = {}
    returned = outer.apply_pass(graph, results)
    # SetAlpha only touched attributes: the census from the inner pipeline
    # is reused by the outer level.
    assert LOG == ["OpCensus", "SetAlpha", "UsesCensus"]
    assert outer.last_run == ["inner", "UsesCensus"]
    assert inner.last_run == ["OpCensus", "SetAlpha"]
    assert returned == {
        "inner": {"OpCensus": ["Relu", "Relu"], "SetAlpha": 2},
        "UsesCensus": 2,
    }
    assert results["OpCensus"] == ["Relu", "Relu"]
    assert results["inner"] == returned["inner"]


def test_outer_results_reused_by_inner_pipeline(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    outer = Pipeline([OpCensus(), SetAlpha(), Pipeline([UsesCensus()], name="inner")])
    outer.apply_pass(graph, {})
    assert LOG == ["OpCensus", "SetAlpha", "UsesCensus"]


def test_nested_modification_makes_outer_analysis_stale(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Add"])
    outer = Pipeline(
        [
            UsesCensus("before"),
            Pipeline([ReluToSigmoid()], name="rewrites"),
            UsesCensus("after"),
        ]
    )
    results: dict[str, Any] = {}
    outer.apply_pass(graph, results)
    assert LOG == ["OpCensus", "before", "ReluToSigmoid", "OpCensus", "after"]
    assert results["OpCensus"] == ["Sigmoid", "Add"]


def test_nested_unrelated_modification_keeps_outer_analysis(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    outer = Pipeline(
        [UsesCensus("before"), Pipeline([SetAlpha()], name="attrs"), UsesCensus("after")]
    )
    outer.apply_pass(graph, {})
    assert LOG == ["OpCensus", "before", "SetAlpha", "after"]


def test_analysis_run_after_change_inside_nested_pipeline_stays_valid(
    chain_graph: Any,
) -> None:
    graph = chain_graph(["Relu"])
    outer = Pipeline([Pipeline([ReluToSigmoid(), OpCensus()], name="stage"), UsesCensus()])
    outer.apply_pass(graph, {})
    # The census ran after the rewrite, inside the stage; the stage's own
    # modifications must not make it stale again at the outer level.
    assert LOG == ["ReluToSigmoid", "OpCensus", "UsesCensus"]


def test_nested_pipeline_that_changed_nothing(chain_graph: Any) -> None:
    graph = chain_graph(["Sigmoid"])
    inner = Pipeline([ReluToSigmoid()], name="rewrites")
    outer = Pipeline([inner])
    results = PipelineResults()
    assert outer.apply_pass(graph, results) is None
    assert outer.last_run == ["rewrites"]
    assert results == {}
    assert results.modified_since == {
        "ReluToSigmoid": Modifies.Nothing,
        "rewrites": Modifies.Nothing,
    }


def test_up_to_date_nested_pipeline_is_skipped(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    outer = Pipeline([Pipeline([OpCensus()], name="analyses"), SetAlpha()])
    results = PipelineResults()
    outer.apply_pass(graph, results)
    assert LOG == ["OpCensus", "SetAlpha"]
    LOG.clear()
    # Only attributes changed since "analyses" ran: it is not stale.
    assert outer.apply_pass(graph, results) is None
    assert LOG == []
    assert outer.last_run == []
    # A node change (by another pipeline sharing the results) makes the
    # nested pipeline stale through OpCensus; SetAlpha reruns too (default,
    # conservative should_reapply) but finds nothing to do.
    Pipeline([ReluToSigmoid()]).apply_pass(graph, results)
    LOG.clear()
    assert outer.apply_pass(graph, results) == {"analyses": {"OpCensus": ["Sigmoid"]}}
    assert LOG == ["OpCensus", "SetAlpha"]
    assert outer.last_run == ["analyses", "SetAlpha"]
