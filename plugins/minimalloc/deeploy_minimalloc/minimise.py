"""Peak minimisation: MiniMalloc decides capacities; a bisection turns that into the smallest peak it can reach.

MiniMalloc itself only answers "does everything fit below C?".  To minimise,
start from a valid placement (an upper bound), first ask for the lower bound
itself (most real instances reach it, and then one probe proves optimality),
then bisect between what is known impossible and the best peak found.  A
probe that finds a placement lowers the upper bound to that placement's peak
(often below the probed capacity); a probe that exhausts the search proves
every capacity up to it impossible; a probe that runs out of budget proves
nothing, and the bisection moves on above it.

Probes have a node budget, and the whole minimisation a total node budget,
so that the sequence of probes, and therefore the answer, does not depend on
the machine's speed; the time limit is only a safety net that cuts the
sequence short (and the report says so, because then the answer may differ
between machines).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from deeploy_minimalloc.backend import SearchSettings
from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.outcome import SearchStatus
from deeploy_minimalloc.report import Probe


@dataclass(frozen=True)
class MinimiseResult:
    """The best placement found (per buffer index; None if none fits ``ceiling``), and what was proved."""

    offsets: tuple[int, ...] | None
    peak: int | None
    impossible_below: int
    """Every capacity below this is proved impossible (at least the lower bound)."""
    probes: tuple[Probe, ...]
    time_limit_reached: bool
    budget_exhausted: bool = False
    """The total node budget ended the bisection before it closed."""


def peak_of(instance: SearchInstance, offsets: tuple[int, ...]) -> int:
    return max((offset + size for offset, size in zip(offsets, instance.sizes)), default=0)


def minimise(instance: SearchInstance, lower_bound: int, incumbent: tuple[int, ...] | None, ceiling: int | None,
             settings: SearchSettings, time_left: Callable[[], float | None],
             node_budget: int | None = None) -> MinimiseResult:
    """Search peaks in ``[lower_bound, min(incumbent peak - 1, ceiling)]``.

    ``incumbent``: a valid placement to improve on (None: none known);
    ``ceiling``: the capacity the answer must respect (None: unbounded);
    ``time_left()``: seconds left for the next probe (None: no limit);
    ``node_budget``: search nodes all probes together may spend (None: no limit).
    """
    best = incumbent
    best_peak = peak_of(instance, incumbent) if incumbent is not None else None
    if best_peak is not None and ceiling is not None and best_peak > ceiling:
        best, best_peak = None, None
    impossible_below = lower_bound
    low = lower_bound
    high = best_peak - 1 if best_peak is not None else ceiling
    if high is not None and ceiling is not None:
        high = min(high, ceiling)
    if high is None:
        raise ValueError("minimise needs an incumbent placement or a ceiling")
    probes: list[Probe] = []
    time_limit_reached = False
    budget_exhausted = False
    spent = 0
    first = True
    while low <= high:
        if node_budget is not None and spent >= node_budget:
            budget_exhausted = True
            break
        capacity = low if first else (low + high) // 2
        first = False
        remaining = time_left()
        if remaining is not None and remaining <= 0:
            time_limit_reached = True
            break
        started = time.monotonic()
        probe_settings = settings
        if node_budget is not None:
            # A round robin over h heuristics with doubling per-heuristic limits spends up to about 3 h times its
            # last limit: cap that limit so that one probe cannot overrun what is left of the budget.
            per_heuristic = max(1, (node_budget - spent) // (3 * len(settings.heuristics)))
            if settings.node_limit is None or per_heuristic < settings.node_limit:
                probe_settings = replace(settings, node_limit=per_heuristic)
        outcome = probe_settings.run(instance, capacity, remaining)
        spent += outcome.nodes
        probes.append(Probe(capacity, outcome.status, outcome.nodes, outcome.backtracks,
                            time.monotonic() - started, outcome.heuristic))
        if outcome.status == SearchStatus.FOUND:
            best = outcome.offsets
            best_peak = peak_of(instance, outcome.offsets)
            high = best_peak - 1
        elif outcome.status == SearchStatus.INFEASIBLE:
            impossible_below = max(impossible_below, capacity + 1)
            low = capacity + 1
        elif outcome.status == SearchStatus.BUDGET:
            budget_exhausted = budget_exhausted or probe_settings is not settings
            low = capacity + 1
        else:
            time_limit_reached = True
            break
    return MinimiseResult(best, best_peak, impossible_below, tuple(probes), time_limit_reached, budget_exhausted)
