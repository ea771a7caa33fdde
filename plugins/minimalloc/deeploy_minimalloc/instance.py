"""The search's view of a problem: buffers as indices, the sweep done once.

Both backends (pure Python and native) receive exactly this, so they start
from identical data and can be compared number for number.  Zero-sized blocks
are left out: they take no memory, and offset 0 never overlaps anything under
the verifier's half-open address ranges, so they need no search.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.plugin_api import AllocationProblem

from deeploy_minimalloc.sweep import SweepResult, sweep


@dataclass(frozen=True)
class SearchInstance:
    """Sized buffers (in the problem's block order), their lifetimes and the sweep over them."""

    ids: tuple[str, ...]
    sizes: tuple[int, ...]
    lowers: tuple[int, ...]
    uppers: tuple[int, ...]
    alignment: int
    sweep: SweepResult

    @property
    def count(self) -> int:
        return len(self.sizes)

    @classmethod
    def from_problem(cls, problem: AllocationProblem) -> SearchInstance:
        sized = [block for block in problem.blocks if block.size > 0]
        lowers = tuple(block.lower for block in sized)
        uppers = tuple(block.upper for block in sized)
        return cls(
            ids=tuple(block.id for block in sized),
            sizes=tuple(block.size for block in sized),
            lowers=lowers,
            uppers=uppers,
            alignment=problem.alignment,
            sweep=sweep(lowers, uppers),
        )
