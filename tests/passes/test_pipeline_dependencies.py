"""Dependency resolution and ordering in Pipeline."""

from __future__ import annotations

from typing import Any

import pytest

from deeploy_core.passes import Modifies, Pass, PassDependencyCycleError, Pipeline

LOG: list[str] = []


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    LOG.clear()


class Logged(Pass[Any]):
    """Records its name when run and returns a value derived from its deps."""

    deps: tuple[type[Pass[Any]] | Pass[Any], ...] = ()

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        return set(self.deps)

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> Any:
        LOG.append(self.name)
        return f"{self.name}@{len(graph.nodes)}"


class Base(Logged):
    pass


class Middle(Logged):
    deps = (Base,)


class Top(Logged):
    deps = (Middle,)


class SeesDeps(Logged):
    deps = (Base, Middle)

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> Any:
        # Dependencies' results must already be available.
        LOG.append(self.name)
        return (pipeline_results["Base"], pipeline_results["Middle"])


def test_dependency_runs_before_dependent_even_if_listed_after(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu"])
    pipeline = Pipeline([Middle(), Base()])
    pipeline.apply_pass(graph, {})
    # Base ran once, as Middle's dependency; listed again later, it is not stale.
    assert LOG == ["Base", "Middle"]
    assert pipeline.last_run == ["Base", "Middle"]


def test_transitive_dependencies_run_in_order(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results: dict[str, Any] = {}
    Pipeline([Top()]).apply_pass(graph, results)
    assert LOG == ["Base", "Middle", "Top"]
    assert results == {"Base": "Base@1", "Middle": "Middle@1", "Top": "Top@1"}


def test_dependency_results_visible_to_dependent(chain_graph: Any) -> None:
    graph = chain_graph(["Relu", "Relu", "Relu"])
    result = Pipeline([SeesDeps()]).apply_pass(graph, {})
    assert result is not None
    assert result["SeesDeps"] == ("Base@3", "Middle@3")
    # Shared dependency (Base of both SeesDeps and Middle) runs once.
    assert LOG == ["Base", "Middle", "SeesDeps"]


class DiamondLeft(Logged):
    deps = (Base,)


class DiamondRight(Logged):
    deps = (Base,)


class Diamond(Logged):
    deps = (DiamondRight, DiamondLeft)


def test_diamond_runs_shared_dependency_once_in_deterministic_order(
    chain_graph: Any,
) -> None:
    graph = chain_graph(["Relu"])
    Pipeline([Diamond()]).apply_pass(graph, {})
    # Dependencies of one pass are ensured in name order.
    assert LOG == ["Base", "DiamondLeft", "DiamondRight", "Diamond"]


class CycleA(Logged):
    pass


class CycleB(Logged):
    deps = (CycleA,)


class CycleC(Logged):
    deps = (CycleB,)


CycleA.deps = (CycleC,)


def test_cycle_is_reported_with_pass_names() -> None:
    with pytest.raises(PassDependencyCycleError) as info:
        Pipeline([CycleA()])
    assert isinstance(info.value, ValueError)
    assert info.value.cycle == ("CycleA", "CycleC", "CycleB", "CycleA")
    message = str(info.value)
    for name in ("CycleA", "CycleB", "CycleC"):
        assert name in message
    assert LOG == []


class SelfDependent(Logged):
    pass


SelfDependent.deps = (SelfDependent,)


def test_self_dependency_is_a_cycle() -> None:
    with pytest.raises(PassDependencyCycleError, match="SelfDependent -> SelfDependent"):
        Pipeline([SelfDependent()])


class Configurable(Logged):
    def __init__(self, tag: str = "default") -> None:
        self.tag = tag

    def apply_pass(self, graph: Any, pipeline_results: dict[str, Any]) -> Any:
        LOG.append(f"{self.name}:{self.tag}")
        return self.tag


class NeedsConfigurable(Logged):
    deps = (Configurable,)


def test_listed_instance_wins_over_dependency_class(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    results: dict[str, Any] = {}
    Pipeline([NeedsConfigurable(), Configurable("custom")]).apply_pass(graph, results)
    # The dependency class resolves to the listed instance (same name).
    assert LOG == ["Configurable:custom", "NeedsConfigurable"]
    assert results["Configurable"] == "custom"


def test_first_listed_instance_wins_among_duplicates(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    Pipeline([Configurable("first"), Configurable("second")]).apply_pass(graph, {})
    assert LOG == ["Configurable:first"]


class NeedsArguments(Logged):
    def __init__(self, required: int) -> None:
        self.required = required


class NeedsNeedsArguments(Logged):
    deps = (NeedsArguments,)


def test_uninstantiable_dependency_class_is_reported() -> None:
    with pytest.raises(TypeError, match="NeedsArguments"):
        Pipeline([NeedsNeedsArguments()])
    # Listing an instance makes it work.
    Pipeline([NeedsArguments(3), NeedsNeedsArguments()])


class Renamed(Logged):
    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name


def test_instances_with_distinct_names_are_distinct_passes(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    result = Pipeline([Renamed("one"), Renamed("two")]).apply_pass(graph, {})
    assert LOG == ["one", "two"]
    assert result == {"one": "one@1", "two": "two@1"}


class DependsOnInstance(Logged):
    deps = (Renamed("dep-instance"),)


def test_dependency_given_as_instance(chain_graph: Any) -> None:
    graph = chain_graph(["Relu"])
    Pipeline([DependsOnInstance()]).apply_pass(graph, {})
    assert LOG == ["dep-instance", "DependsOnInstance"]
