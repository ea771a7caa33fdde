"""Errors raised by the pass machinery."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["PassDependencyCycleError"]


class PassDependencyCycleError(ValueError):
    """The ``depends_on`` relation of a pipeline's passes contains a cycle.

    There is no order in which such passes could run, so this is reported
    when the pipeline is built rather than half-way through compiling.
    ``cycle`` holds the pass names along the cycle, the first name repeated
    at the end (``("A", "B", "A")``).
    """

    def __init__(self, cycle: Sequence[str]) -> None:
        self.cycle: tuple[str, ...] = tuple(cycle)
        super().__init__("pass dependency cycle: " + " -> ".join(self.cycle))
