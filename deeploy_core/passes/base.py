"""The unit of work of the compiler: a pass over a graph.

Passes are small, composable steps -- either *analyses* that compute a result
without touching the graph, or *transformations* that rewrite it.  They are
written against this interface rather than calling each other directly so
that a :class:`~deeploy_core.passes.pipeline.Pipeline` can order them by
their declared dependencies, share their results, and skip recomputing an
analysis whose inputs have not changed.
"""

from __future__ import annotations

import abc
from typing import Any, Generic, TypeVar

from deeploy_core.passes.modifies import Modifies

__all__ = ["GraphT", "Pass"]

#: The graph a pass operates on.  The pass machinery never looks inside the
#: graph, so it is generic; concrete passes usually fix it to
#: ``onnx_graphsurgeon.Graph``.
GraphT = TypeVar("GraphT")


class Pass(abc.ABC, Generic[GraphT]):
    """Base class of analyses and transformations.

    A pass is identified by its :attr:`name`: results are stored under it and
    the pipeline uses it to recognise a pass that has already run, even when
    it was requested through a different instance (for example as a class in
    :meth:`depends_on`).
    """

    @property
    def name(self) -> str:
        """Key of this pass in the results dictionary.

        Defaults to the class name, which makes "the result of analysis X"
        easy to look up.  Override it when several differently configured
        instances of the same class must coexist in one pipeline.
        """
        return type(self).__name__

    @abc.abstractmethod
    def modifies(self) -> Modifies:
        """Which kinds of graph elements this pass may change.

        The pipeline uses this to invalidate the results of other passes
        after this one reports a change.  Analyses return
        ``Modifies.Nothing``.
        """

    def should_reapply(self, modified: Modifies) -> bool:
        """Whether this pass must run again after ``modified`` changed.

        ``modified`` is everything that was modified in the graph since this
        pass last ran.  The default is conservative -- rerun after any
        change -- because a stale result is a silent miscompilation while a
        redundant rerun only costs time.  An analysis overrides this to look
        only at the flags it actually reads, so that unrelated rewrites do not
        force a recomputation.
        """
        return bool(modified)

    def depends_on(self) -> set[type[Pass[Any]] | Pass[Any]]:
        """Passes that must have run (and be up to date) before this one.

        Entries may be instances or classes; a class is instantiated without
        arguments by the pipeline.  Their results are available to
        :meth:`apply_pass` through ``pipeline_results[dependency.name]``.
        """
        return set()

    @abc.abstractmethod
    def apply_pass(self, graph: GraphT, pipeline_results: dict[str, Any]) -> Any | None:
        """Run the pass on ``graph``.

        ``pipeline_results`` maps the names of passes that already ran to
        their results; it is how a pass reads the analyses it depends on.

        Return ``None`` *only* when nothing was changed: the pipeline then
        records no result and invalidates nothing, which is what lets
        transformations be repeated until they reach a fixpoint.  Otherwise
        return a result object (for a transformation anything describing the
        change, e.g. a count; for an analysis the analysis itself).
        """

    def report(self, result: Any) -> str | None:
        """Optional one-line, human-readable summary of ``result``.

        Used by drivers for verbose output; ``None`` means "nothing worth
        saying".
        """
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__qualname__} {self.name!r}>"
