"""Results, return values, naming and error reporting of Pipeline."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from deeploy_core.passes import Modifies, Pass, Pipeline, PipelineResults


class Analysis(Pass[Any]):
    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def should_reapply(self, modified: Modifies) -> bool:
        return bool(modified & Modifies.Shapes)

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> Any:
        return [node.name for node in graph.nodes]


class Unchanged(Pass[Any]):
    def modifies(self) -> Modifies:
        return Modifies.Nodes

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> None:
        return None


class Renamer(Pass[Any]):
    def modifies(self) -> Modifies:
        return Modifies.Attributes

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        return {Analysis}

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> int:
        for node in graph.nodes:
            node.name = node.name.upper()
        return len(graph.nodes)

    def report(self, result: Any) -> str | None:
        return f"renamed {result} nodes"


class Boom(Pass[Any]):
    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> None:
        raise KeyError("missing thing")


class SeesResults(Pass[Any]):
    seen: list[dict[str, Any]] = []

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> bool:
        SeesResults.seen.append(pipeline_results)
        return True


def test_results_keys_and_return_value(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Sigmoid"])
    results: dict[str, Any] = {"Earlier": "kept"}
    returned = Pipeline([Unchanged(), Renamer()]).apply_pass(graph, results)
    # The dependency ran in this call, so it is part of the return value.
    assert returned == {"Analysis": ["n0", "n1"], "Renamer": 2}
    # Passes returning None leave no entry; unrelated entries survive.
    assert results == {"Earlier": "kept", "Analysis": ["n0", "n1"], "Renamer": 2}
    assert [node.name for node in graph.nodes] == ["N0", "N1"]


def test_pipeline_returns_none_when_nothing_changed(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results: dict[str, Any] = {}
    pipeline = Pipeline([Unchanged()])
    assert pipeline.apply_pass(graph, results) is None
    assert results == {}
    assert pipeline.last_run == ["Unchanged"]


def test_empty_pipeline(chain_graph: Any) -> None:
    pipeline: Pipeline[Any] = Pipeline([])
    assert pipeline.apply_pass(chain_graph(["Relu"]), {}) is None
    assert pipeline.modifies() == Modifies.Nothing
    assert not pipeline.should_reapply(Modifies.Everything)


def test_plain_dict_is_wrapped_and_filled(chain_graph: Any) -> None:
    SeesResults.seen.clear()
    results: dict[str, Any] = {"given": 1}
    Pipeline([SeesResults()]).apply_pass(chain_graph(["Relu"]), results)
    (seen,) = SeesResults.seen
    assert isinstance(seen, PipelineResults)
    assert seen is not results
    assert seen["given"] == 1  # the caller's entries are visible to passes
    assert type(results) is dict
    assert results == {"given": 1, "SeesResults": True}


def test_pipeline_results_is_used_directly(chain_graph: Any) -> None:
    SeesResults.seen.clear()
    results = PipelineResults()
    Pipeline([SeesResults()]).apply_pass(chain_graph(["Relu"]), results)
    assert SeesResults.seen == [results]
    assert SeesResults.seen[0] is results
    assert results == {"SeesResults": True}  # compares like a dict


def test_exception_propagates_with_note(chain_graph: Any) -> None:
    results: dict[str, Any] = {}
    pipeline = Pipeline([Analysis(), Boom()], name="outer")
    with pytest.raises(KeyError, match="missing thing") as info:
        pipeline.apply_pass(chain_graph(["Relu"]), results)
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == ["in pass Boom of pipeline outer"]
    # Results produced before the failure still reach the caller's dict.
    assert results == {"Analysis": ["n0"]}
    assert pipeline.last_run == ["Analysis", "Boom"]


def test_exception_in_nested_pipeline_gets_a_note_per_level(chain_graph: Any) -> None:
    pipeline = Pipeline([Pipeline([Boom()], name="inner")], name="outer")
    with pytest.raises(KeyError) as info:
        pipeline.apply_pass(chain_graph(["Relu"]), {})
    if sys.version_info >= (3, 11):
        assert info.value.__notes__ == [
            "in pass Boom of pipeline inner",
            "in pass inner of pipeline outer",
        ]


def test_failed_pass_is_not_recorded_as_run(chain_graph: Any) -> None:
    results = PipelineResults()
    with pytest.raises(KeyError):
        Pipeline([Boom()]).apply_pass(chain_graph(["Relu"]), results)
    assert not results.has_run("Boom")


def test_pipeline_aggregates_children() -> None:
    pipeline = Pipeline([Analysis(), Renamer(), Unchanged()])
    assert pipeline.modifies() == Modifies.Attributes | Modifies.Nodes
    assert pipeline.depends_on() == set()
    # Analysis reapplies on Shapes only; Renamer and Unchanged on anything.
    assert pipeline.should_reapply(Modifies.Types)
    assert Pipeline([Analysis()]).should_reapply(Modifies.Shapes)
    assert not Pipeline([Analysis()]).should_reapply(Modifies.Types)
    assert not pipeline.should_reapply(Modifies.Nothing)


def test_pipeline_modifies_includes_dependencies() -> None:
    class UsesRenamer(Analysis):
        def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
            return {Renamer}

    assert Pipeline([UsesRenamer()]).modifies() == Modifies.Attributes


def test_names_and_repr() -> None:
    assert Analysis().name == "Analysis"
    assert repr(Analysis()) == "<Analysis 'Analysis'>"
    assert Pipeline([Analysis(), Unchanged()]).name == "Pipeline(Analysis, Unchanged)"
    assert Pipeline([Analysis()], name="analyses").name == "analyses"
    assert "Analysis" in repr(Pipeline([Analysis()], name="analyses"))


def test_report(chain_graph: Any) -> None:
    assert Analysis().report(["x"]) is None
    pipeline = Pipeline([Renamer()])
    result = pipeline.apply_pass(chain_graph(["Relu", "Relu"]), {})
    assert pipeline.report(result) == "Renamer: renamed 2 nodes"
