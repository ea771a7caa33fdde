"""What one run of the search reports, whichever backend ran it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum


class SearchStatus(IntEnum):
    """How a search for a placement under one capacity ended (the native backend returns these numbers)."""

    FOUND = 0
    """Every buffer placed below the capacity."""
    INFEASIBLE = 1
    """The whole canonical search space was exhausted: no placement fits (a proof)."""
    BUDGET = 2
    """The node budget ran out before a placement was found or ruled out."""
    TIME_LIMIT = 3
    """The wall-clock limit ran out before a placement was found or ruled out."""


@dataclass(frozen=True)
class SearchOutcome:
    """The status, the offsets (per buffer index, only when found) and the work done.

    ``nodes`` counts search nodes over all round-robin attempts, ``backtracks``
    the nodes whose every child failed, ``heuristic`` the preordering that
    succeeded (or ``None``).  Both backends count nodes identically, so node
    budgets mean the same on both.
    """

    status: SearchStatus
    offsets: tuple[int, ...] = ()
    nodes: int = 0
    backtracks: int = 0
    heuristic: str | None = None
