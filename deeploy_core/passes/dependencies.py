"""Resolution of the ``depends_on`` closure of a pipeline's passes.

This is done once, when a pipeline is built, so that configuration errors
(cycles, dependencies that cannot be instantiated) surface before any graph
is touched, and so that running the pipeline is a simple walk over
precomputed, deterministically ordered dependency lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from deeploy_core.passes.base import Pass
from deeploy_core.passes.errors import PassDependencyCycleError

__all__ = ["DependencyGraph", "resolve_dependencies"]


@dataclass(frozen=True)
class DependencyGraph:
    """The passes reachable from a pipeline and their dependency edges.

    ``passes`` maps each name to the one instance that represents it;
    ``dependencies`` maps each name to the names it depends on, sorted by
    name (``depends_on`` returns an unordered set, and the run order must not
    depend on hashing).
    """

    passes: dict[str, Pass[Any]]
    dependencies: dict[str, tuple[str, ...]]


def resolve_dependencies(passes: Sequence[Pass[Any]]) -> DependencyGraph:
    """Collect the dependency closure of ``passes`` and check it is acyclic.

    Passes are identified by name.  When two distinct instances share a name,
    the first one *listed* wins: the pipeline's own passes in order first,
    then dependencies in the order they are discovered (a pass's whole
    ``depends_on`` set, by name, before the dependencies of those
    dependencies).  Later instances with that name are treated as references
    to the winner, so configure a pass by listing it in the pipeline, or give
    differently configured instances different names.  A class listed as a
    dependency refers to the registered instance of exactly that class under
    the class name if there is one, and is otherwise instantiated (once)
    without arguments.

    Raises:
        PassDependencyCycleError: if the dependencies form a cycle.
        TypeError: if a dependency class cannot be instantiated without
            arguments.
        ValueError: if one ``depends_on`` set holds two different passes with
            the same name (which one was meant is ambiguous).
    """
    registry: dict[str, Pass[Any]] = {}
    dependencies: dict[str, tuple[str, ...]] = {}
    instances_of_class: dict[type[Pass[Any]], Pass[Any]] = {}

    for p in passes:
        registry.setdefault(p.name, p)

    def instantiate(dep: type[Pass[Any]] | Pass[Any], owner: str) -> Pass[Any]:
        if isinstance(dep, Pass):
            return dep
        if dep not in instances_of_class:
            # Reuse an already listed instance of exactly this class under the
            # default name: this is what lets a pass depend on a class whose
            # constructor needs arguments, provided an instance is listed.
            listed = registry.get(dep.__name__)
            if listed is not None and type(listed) is dep:
                instances_of_class[dep] = listed
                return listed
            try:
                instances_of_class[dep] = dep()
            except TypeError as exc:
                raise TypeError(
                    f"dependency {dep.__qualname__} of pass {owner!r} cannot be "
                    "instantiated without arguments; list an instance instead"
                ) from exc
        return instances_of_class[dep]

    def unique_by_name(deps: Iterable[Pass[Any]], owner: str) -> list[Pass[Any]]:
        by_name: dict[str, Pass[Any]] = {}
        for dep in deps:
            other = by_name.setdefault(dep.name, dep)
            if other is not dep and dep.name not in registry:
                raise ValueError(
                    f"pass {owner!r} depends on two different passes named {dep.name!r}"
                )
        return [by_name[name] for name in sorted(by_name)]

    def visit(name: str) -> None:
        # Register a pass's whole dependency set before descending into it:
        # that is the "first listed" order documented above.
        deps = unique_by_name((instantiate(d, name) for d in registry[name].depends_on()), name)
        for dep in deps:
            registry.setdefault(dep.name, dep)
        dependencies[name] = tuple(dep.name for dep in deps)
        for dep in deps:
            if dep.name not in dependencies:
                visit(dep.name)

    for p in passes:
        if p.name not in dependencies:
            visit(p.name)

    _check_acyclic(dependencies)
    return DependencyGraph(passes=registry, dependencies=dependencies)


def _check_acyclic(dependencies: dict[str, tuple[str, ...]]) -> None:
    """Raise :class:`PassDependencyCycleError` naming the first cycle found."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        if name in done:
            return
        if name in path:
            raise PassDependencyCycleError(path[path.index(name) :] + [name])
        path.append(name)
        for dep in dependencies[name]:
            visit(dep)
        path.pop()
        done.add(name)

    for name in dependencies:
        visit(name)
