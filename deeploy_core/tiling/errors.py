"""The tiler's two ways of failing: no tiling fits, or the solver stopped before it knew."""

from __future__ import annotations

from deeploy_core.errors import DeeployError


class TilingInfeasibleError(DeeployError):
    """No tiling fits the compute level; the message names the layer and the minimum size.

    ``level`` and ``needed_bytes`` carry that size for programs that retry
    with it (None when no size would help, e.g. an allocator that gave up).
    """

    def __init__(self, message: str, level: str | None = None, needed_bytes: int | None = None) -> None:
        super().__init__(message)
        self.level = level
        self.needed_bytes = needed_bytes


class TilingSolveStoppedError(DeeployError):
    """The solver stopped (its limit, an interrupt) before finding a tiling or proving there is none.

    Kept apart from :class:`TilingInfeasibleError` so that a search that
    merely ran out of time is never reported, or retried, as infeasible.
    """
