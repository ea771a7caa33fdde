"""Running passes in order, with dependencies and result reuse.

A pipeline is itself a pass, so pipelines nest: a compiler flow is a pipeline
of stages, each stage a pipeline of passes.  The pipeline's job is to make
every pass see up-to-date results of the passes it depends on while running
each analysis as few times as possible:

* before a pass runs, its dependencies are *ensured*: run (dependencies
  first) unless they already ran and nothing they care about -- according to
  their own :meth:`~Pass.should_reapply` -- was modified since;
* the pipeline's own passes go through the same rule, so a pass that already
  ran as a dependency, or in an earlier run with the same results, and is not
  stale is not run again;
* after a pass reports a change (returns non-``None``), what it
  :meth:`~Pass.modifies` is recorded against every other pass that has run.

The bookkeeping lives in the shared :class:`PipelineResults`, which is what
makes result reuse work across nesting levels.
"""

from __future__ import annotations

import functools
import operator
import sys
from collections.abc import Sequence
from typing import Any

from deeploy_core.passes.base import GraphT, Pass
from deeploy_core.passes.dependencies import resolve_dependencies
from deeploy_core.passes.modifies import Modifies
from deeploy_core.passes.results import PipelineResults

__all__ = ["Pipeline"]


class Pipeline(Pass[GraphT]):
    """An ordered sequence of passes, run with their dependencies.

    Passes are identified by :attr:`Pass.name`.  If two distinct instances
    with the same name appear among the passes or their (transitive)
    dependencies, the first one listed wins -- the pipeline's own passes in
    order, then dependencies in discovery order -- and the others are treated
    as references to it (see :func:`resolve_dependencies`).  Dependencies are
    resolved, and cycles reported, when the pipeline is constructed.

    Dependencies are ensured in name order.  A dependency that *transforms*
    the graph can therefore invalidate a sibling dependency ensured just
    before it; make the affected analysis depend on the transformation to
    get the right order.
    """

    def __init__(self, passes: Sequence[Pass[GraphT]], name: str | None = None) -> None:
        """Create a pipeline running ``passes`` in the given order.

        Without an explicit ``name``, the name is derived from the children
        (``"Pipeline(A, B)"``) rather than just the class name: pipelines
        nested in the same parent must have distinct names, since the name is
        their identity.

        Raises:
            PassDependencyCycleError: if the dependencies contain a cycle.
        """
        self.passes: tuple[Pass[GraphT], ...] = tuple(passes)
        self._name = name
        self._dependencies = resolve_dependencies(self.passes)
        #: Names of the passes this pipeline level executed in its last run,
        #: in order; a nested pipeline is a single entry.  For debugging and
        #: tests.
        self.last_run: list[str] = []

    @property
    def name(self) -> str:
        if self._name is not None:
            return self._name
        return f"{type(self).__name__}({', '.join(p.name for p in self.passes)})"

    def modifies(self) -> Modifies:
        """Union of what the passes, including their dependencies, modify.

        Dependencies are included because this pipeline may run them too.
        """
        return functools.reduce(
            operator.or_,
            (p.modifies() for p in self._dependencies.passes.values()),
            Modifies.Nothing,
        )

    def should_reapply(self, modified: Modifies) -> bool:
        """Rerun if any of the pipeline's own passes would rerun.

        Dependencies are not consulted: they only matter to the extent that a
        pass needing them reruns, in which case they are ensured anyway.
        """
        return any(p.should_reapply(modified) for p in self.passes)

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        """Nothing: the children's dependencies are resolved inside."""
        return set()

    def apply_pass(self, graph: GraphT, pipeline_results: dict[str, Any]) -> dict[str, Any] | None:
        """Run the passes, ensuring their dependencies first.

        ``pipeline_results`` is read for (and receives) the results of all
        passes.  If it is a plain ``dict`` rather than a
        :class:`PipelineResults`, the run works on a ``PipelineResults``
        copy whose results are copied back at the end; the staleness
        bookkeeping is then lost, so passes with a result in the dict but no
        record of having run are treated as never run.

        Returns ``{name: result}`` for the passes this call ran that reported
        a change or produced a result, or ``None`` if there are none.
        Exceptions raised by a pass propagate unchanged, with a note naming
        the pass and the pipeline (Python >= 3.11).
        """
        if isinstance(pipeline_results, PipelineResults):
            shared = pipeline_results
        else:
            shared = PipelineResults(pipeline_results)
        self.last_run = []
        produced: dict[str, Any] = {}
        try:
            for p in self.passes:
                self._ensure(p.name, graph, shared, produced)
        finally:
            if shared is not pipeline_results:
                pipeline_results.update(shared)
        return produced or None

    def _ensure(
        self,
        name: str,
        graph: GraphT,
        results: PipelineResults,
        produced: dict[str, Any],
    ) -> None:
        """Run pass ``name`` (dependencies first) unless it is up to date."""
        p = self._dependencies.passes[name]
        if results.has_run(name) and not p.should_reapply(results.modified_since[name]):
            return
        for dependency in self._dependencies.dependencies[name]:
            self._ensure(dependency, graph, results, produced)
        self._run(p, graph, results, produced)

    def _run(
        self,
        p: Pass[Any],
        graph: GraphT,
        results: PipelineResults,
        produced: dict[str, Any],
    ) -> None:
        """Run one pass and record what it did."""
        self.last_run.append(p.name)
        try:
            result = p.apply_pass(graph, results)
        except Exception as exc:
            if sys.version_info >= (3, 11):
                exc.add_note(f"in pass {p.name} of pipeline {self.name}")
            raise
        results.record_run(p.name)
        if result is None:
            return
        results[p.name] = result
        produced[p.name] = result
        # A nested pipeline's children have already recorded their own
        # modifications, each at the moment it happened.  Recording the
        # pipeline's union again would only mark passes that ran after the
        # change (including its own children) as stale for no reason.
        if not isinstance(p, Pipeline):
            results.record_modification(p.modifies(), by=p.name)

    def report(self, result: Any) -> str | None:
        """The children's reports, one ``name: report`` line each."""
        if not isinstance(result, dict):
            return None
        lines = []
        for name, value in result.items():
            p = self._dependencies.passes.get(name)
            summary = p.report(value) if p is not None else None
            if summary:
                lines.append(f"{name}: {summary}")
        return "\n".join(lines) or None

    def __repr__(self) -> str:
        children = ", ".join(repr(p) for p in self.passes)
        return f"<{type(self).__qualname__} {self.name!r} [{children}]>"
