"""Results shared between the passes of a pipeline run.

Passes communicate through a plain ``dict`` (pass name -> result) so that a
pass never needs to know about pipelines.  The pipeline, however, also has to
remember *what changed in the graph since each pass last ran*, and that
bookkeeping must be shared by nested pipelines: otherwise an inner pipeline
could not tell that an analysis computed by the outer one is still valid, and
would needlessly recompute it.  Attaching the bookkeeping to the results
dictionary itself makes it travel wherever the results go.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.passes.modifies import Modifies

__all__ = ["PipelineResults"]


class PipelineResults(dict[str, Any]):
    """A ``dict`` of pass name -> result, plus staleness bookkeeping.

    :attr:`modified_since` maps the name of every pass that has run to the
    union of everything modified in the graph since it last ran.  It is
    pipeline-internal bookkeeping: passes should only use the dictionary
    interface.  Dictionary equality ignores it, so a ``PipelineResults``
    compares equal to a plain ``dict`` with the same results.
    """

    modified_since: dict[str, Modifies]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.modified_since = {}

    def has_run(self, name: str) -> bool:
        """Whether a pass called ``name`` has run with these results."""
        return name in self.modified_since

    def record_run(self, name: str) -> None:
        """Note that ``name`` just ran: nothing has changed since then."""
        self.modified_since[name] = Modifies.Nothing

    def record_modification(self, modified: Modifies, *, by: str) -> None:
        """Note that pass ``by`` changed ``modified`` in the graph.

        Every *other* pass that has run now has ``modified`` in its
        "changed since" set; the modifying pass itself has, by definition,
        seen its own changes.
        """
        for name in self.modified_since:
            if name != by:
                self.modified_since[name] |= modified

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"
