"""The ``minimalloc`` allocator: options in, verified-shape ``AllocationSolution`` out.

This module only orchestrates: it turns the problem into a
:class:`~deeploy_minimalloc.instance.SearchInstance`, decides a capacity with
the search (or minimises the peak with :mod:`deeploy_minimalloc.minimise`),
and writes a reason that names the capacity, the lower bound and whether an
infeasible answer is a proof or a give-up.  The core verifies every offset it
receives with its own independent checker, and so do this plugin's tests.
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar, Sequence

from deeploy_core.plugin_api import AllocationProblem, AllocationSolution, DeeployError

from deeploy_minimalloc.backend import SearchSettings, resolve_backend
from deeploy_minimalloc.instance import SearchInstance
from deeploy_minimalloc.minimise import minimise, peak_of
from deeploy_minimalloc.outcome import SearchOutcome, SearchStatus
from deeploy_minimalloc.preordering import DEFAULT_PREORDERING, normalise_preordering
from deeploy_minimalloc.report import MiniMallocReport, Probe

DEFAULT_TIME_LIMIT = 60.0
"""Seconds per ``solve``; enough for each published challenging instance many times over (native backend)."""

MINIMISE_NODE_LIMIT = 20_000
"""Per-heuristic node budget of each minimisation probe unless ``node_limit`` is given.

A probe that cannot settle a capacity within it is abandoned (the bisection
moves above it), so one hard capacity cannot eat the whole time limit, and
the sequence of probes stays independent of the machine's speed.
"""

MINIMISE_NODE_BUDGET = {"native": 2_000_000, "python": 100_000}
"""Search nodes all probes of one minimisation may spend together, per backend, unless ``minimise_budget`` is given.

The bisection stops once it is spent and returns the best peak found (with
the gap to the lower bound in the reason).  It bounds the work by a count,
not by the clock, so the answer is the same on every machine.  Both budgets
take a few seconds (the C core visits about a million nodes per second, the
pure-Python search about fifteen thousand); given the same budget, both
backends return the same offsets.
"""

_DEFAULT = object()

MODES = ("auto", "decide", "minimise")
_MODE_ALIASES = {"minimize": "minimise"}


class MiniMallocAllocator:
    """MiniMalloc: decides a capacity exactly, or minimises the peak when there is none.

    Options (all keyword, all optional):

    ``time_limit``
        Seconds for one ``solve`` (``None``: no limit; default 60).  Only
        decides between "found" and "gave up": the offsets found never depend
        on it.
    ``mode``
        ``"auto"`` (decide when the problem has a capacity, else minimise),
        ``"decide"`` or ``"minimise"`` (also under a capacity: the smallest
        peak that fits it).
    ``node_limit``
        Per-heuristic node budget of the round robin (``None``: unlimited when
        deciding, :data:`MINIMISE_NODE_LIMIT` per probe when minimising): a
        deterministic alternative to the time limit.
    ``minimise_budget``
        Search nodes all probes of one minimisation may spend together
        (default: :data:`MINIMISE_NODE_BUDGET` of the backend; ``None``: until
        the time limit).
    ``preordering``
        Static preordering heuristics tried in turn (``"WAT,TAW,TWA"`` by
        default; letters in :data:`~deeploy_minimalloc.preordering.HEURISTIC_LETTERS`).
    ``backend``
        ``"native"``, ``"python"`` or ``"auto"`` (default: the
        ``DEEPLOY_MINIMALLOC_BACKEND`` environment variable, else ``auto``).

    After each ``solve``, ``last_report`` holds the details
    (:class:`~deeploy_minimalloc.report.MiniMallocReport`).
    """

    name: ClassVar[str] = "minimalloc"

    def __init__(self, *, time_limit: float | None = DEFAULT_TIME_LIMIT, mode: str = "auto",
                 node_limit: int | None = None, minimise_budget: int | None | object = _DEFAULT,
                 preordering: str | Sequence[str] = DEFAULT_PREORDERING,
                 backend: str | None = None) -> None:
        if time_limit is not None:
            if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) \
                    or math.isnan(time_limit) or time_limit < 0:
                raise DeeployError(f"minimalloc: time_limit must be a non-negative number of seconds or None, "
                                   f"got {time_limit!r}")
            time_limit = float(time_limit)
        mode = _MODE_ALIASES.get(str(mode).strip().lower(), str(mode).strip().lower())
        if mode not in MODES:
            raise DeeployError(f"minimalloc: unknown mode {mode!r} (choose from {', '.join(MODES)})")
        if node_limit is not None and (isinstance(node_limit, bool) or not isinstance(node_limit, int)
                                       or node_limit < 1):
            raise DeeployError(f"minimalloc: node_limit must be a positive integer or None, got {node_limit!r}")
        self.backend = resolve_backend(backend)
        budget: int | None
        if minimise_budget is _DEFAULT:
            budget = MINIMISE_NODE_BUDGET[self.backend]
        elif minimise_budget is None or (isinstance(minimise_budget, int) and not isinstance(minimise_budget, bool)
                                         and minimise_budget >= 1):
            budget = minimise_budget
        else:
            raise DeeployError(f"minimalloc: minimise_budget must be a positive integer or None, "
                               f"got {minimise_budget!r}")
        self.minimise_budget = budget
        self.time_limit = time_limit
        self.mode = mode
        self.node_limit = node_limit
        self.preordering = normalise_preordering(preordering)
        self.last_report: MiniMallocReport | None = None

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        """Place every block of ``problem``; see the class docstring for how the mode is chosen."""
        started = time.monotonic()
        mode = self.mode
        if mode == "auto":
            mode = "decide" if problem.capacity is not None else "minimise"
        if mode == "decide" and problem.capacity is None:
            raise DeeployError("minimalloc: mode 'decide' needs a problem with a capacity (use 'minimise')")
        instance = SearchInstance.from_problem(problem)
        if mode == "decide":
            return self._decide(problem, instance, started)
        return self._minimise(problem, instance, started)

    # -- decide ------------------------------------------------------------------------------------------

    def _decide(self, problem: AllocationProblem, instance: SearchInstance, started: float) -> AllocationSolution:
        capacity = problem.capacity
        assert capacity is not None
        bound = problem.lower_bound()
        if capacity < bound:
            self._report("decide", problem, bound, None, (), started, proved=False, timed_out=False)
            return AllocationSolution(feasible=False, reason=_below_bound(capacity, bound))
        settings = SearchSettings(self.backend, self.preordering, self.node_limit)
        probe_start = time.monotonic()
        outcome = settings.run(instance, capacity, self._time_left(started))
        probe = Probe(capacity, outcome.status, outcome.nodes, outcome.backtracks, time.monotonic() - probe_start,
                      outcome.heuristic)
        if outcome.status == SearchStatus.FOUND:
            peak = peak_of(instance, outcome.offsets)
            self._report("decide", problem, bound, peak, (probe,), started, proved=peak == bound, timed_out=False)
            return AllocationSolution(offsets=_offsets_by_id(problem, instance, outcome.offsets),
                                      reason=f"fits capacity {capacity}: peak {peak}, lower bound {bound}")
        self._report("decide", problem, bound, None, (probe,), started, proved=False,
                     timed_out=outcome.status == SearchStatus.TIME_LIMIT)
        return AllocationSolution(feasible=False, reason=self._failure(capacity, bound, outcome))

    def _failure(self, capacity: int, bound: int, outcome: SearchOutcome) -> str:
        if outcome.status == SearchStatus.INFEASIBLE:
            return (f"no placement fits capacity {capacity} (lower bound {bound}): proved infeasible, "
                    f"the canonical search was exhausted after {outcome.nodes} nodes")
        if outcome.status == SearchStatus.BUDGET:
            return (f"node limit reached ({self.node_limit} nodes per heuristic) before a placement into capacity "
                    f"{capacity} was found (lower bound {bound}); not proved infeasible")
        return (f"time limit reached ({self.time_limit:g} s) before a placement into capacity {capacity} was found "
                f"(lower bound {bound}); not proved infeasible")

    # -- minimise ----------------------------------------------------------------------------------------

    def _minimise(self, problem: AllocationProblem, instance: SearchInstance, started: float) -> AllocationSolution:
        capacity = problem.capacity
        bound = problem.lower_bound()
        if capacity is not None and capacity < bound:
            self._report("minimise", problem, bound, None, (), started, proved=False, timed_out=False)
            return AllocationSolution(feasible=False, reason=_below_bound(capacity, bound))
        greedy = problem.first_fit()
        incumbent = tuple(greedy.offsets[buffer_id] for buffer_id in instance.ids)
        if peak_of(instance, incumbent) == bound:
            self._report("minimise", problem, bound, bound, (), started, proved=True, timed_out=False)
            return AllocationSolution(offsets=_offsets_by_id(problem, instance, incumbent),
                                      reason=f"peak {bound} = lower bound: optimal")
        node_limit = self.node_limit if self.node_limit is not None else MINIMISE_NODE_LIMIT
        settings = SearchSettings(self.backend, self.preordering, node_limit)
        result = minimise(instance, bound, incumbent, capacity, settings, lambda: self._time_left(started),
                          self.minimise_budget)
        proved = result.peak is not None and result.impossible_below >= result.peak
        self._report("minimise", problem, bound, result.peak, result.probes, started, proved=proved,
                     timed_out=result.time_limit_reached)
        cut_short = "; time limit reached" if result.time_limit_reached else (
            f"; node budget of {self.minimise_budget} spent" if result.budget_exhausted else "")
        if result.offsets is None or result.peak is None:
            assert capacity is not None
            if result.impossible_below > capacity:
                reason = f"no placement fits capacity {capacity} (lower bound {bound}): proved infeasible"
            else:
                reason = (f"no placement into capacity {capacity} found (lower bound {bound}); not proved infeasible"
                          f"{cut_short or f' (node limit {node_limit} per heuristic and probe)'}")
            return AllocationSolution(feasible=False, reason=reason)
        if result.peak == bound:
            reason = f"peak {result.peak} = lower bound: optimal"
        elif proved:
            reason = f"peak {result.peak}, lower bound {bound}: optimal (every smaller capacity proved infeasible)"
        else:
            reason = (f"peak {result.peak}, lower bound {bound}: not proved optimal "
                      f"(capacities below {result.impossible_below} proved infeasible){cut_short}")
        return AllocationSolution(offsets=_offsets_by_id(problem, instance, result.offsets), reason=reason)

    # -- helpers -----------------------------------------------------------------------------------------

    def _time_left(self, started: float) -> float | None:
        if self.time_limit is None:
            return None
        return max(0.0, self.time_limit - (time.monotonic() - started))

    def _report(self, mode: str, problem: AllocationProblem, bound: int, peak: int | None,
                probes: Sequence[Probe], started: float, *, proved: bool, timed_out: bool) -> None:
        self.last_report = MiniMallocReport(
            mode=mode, backend=self.backend, capacity=problem.capacity, lower_bound=bound, peak=peak,
            proved_optimal=proved, reached_lower_bound=peak is not None and peak == bound,
            time_limit_reached=timed_out, seconds=time.monotonic() - started, probes=tuple(probes))

    def __repr__(self) -> str:
        options: dict[str, Any] = {"time_limit": self.time_limit, "mode": self.mode, "node_limit": self.node_limit,
                                   "minimise_budget": self.minimise_budget,
                                   "preordering": ",".join(self.preordering), "backend": self.backend}
        return f"MiniMallocAllocator({', '.join(f'{key}={value!r}' for key, value in options.items())})"


def _below_bound(capacity: int, bound: int) -> str:
    return (f"capacity {capacity} is below the lower bound {bound} (the most bytes alive at one step): "
            f"proved infeasible")


def _offsets_by_id(problem: AllocationProblem, instance: SearchInstance, offsets: Sequence[int]) -> dict[str, int]:
    """Offsets for every block in the problem's order; zero-sized blocks at 0, where they overlap nothing."""
    placed = dict(zip(instance.ids, offsets))
    return {block.id: placed.get(block.id, 0) for block in problem.blocks}
