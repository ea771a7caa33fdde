"""What the allocator did on its last problem, for benchmarks, tests and curious users.

:class:`~deeploy_core.allocation.AllocationSolution` carries offsets and a
one-line reason only; the numbers behind that line (every capacity probed,
nodes, whether optimality was proved) are kept here, on the allocator's
``last_report`` attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_minimalloc.outcome import SearchStatus


@dataclass(frozen=True)
class Probe:
    """One decision search: could everything fit ``capacity``?"""

    capacity: int
    status: SearchStatus
    nodes: int
    backtracks: int
    seconds: float
    heuristic: str | None = None


@dataclass(frozen=True)
class MiniMallocReport:
    """The last ``solve``: mode, backend, bounds, result and every probe in order.

    ``peak`` is the peak of the returned offsets (None when none are
    returned).  ``proved_optimal`` holds when every capacity below ``peak``
    was shown impossible (by the lower bound or an exhaustive search);
    ``reached_lower_bound`` when ``peak`` equals the lower bound.
    ``time_limit_reached`` says that the wall clock, not the search, ended
    the work, so the answer may depend on the machine's speed.
    """

    mode: str
    backend: str
    capacity: int | None
    lower_bound: int
    peak: int | None
    proved_optimal: bool
    reached_lower_bound: bool
    time_limit_reached: bool
    seconds: float
    probes: tuple[Probe, ...] = field(default_factory=tuple)

    @property
    def nodes(self) -> int:
        return sum(probe.nodes for probe in self.probes)
