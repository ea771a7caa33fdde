"""Tetris with seeded random orders: the cheap baseline of the seed's allocators.

Each block, in turn, falls onto the blocks already placed that are alive at
the same time (it sits directly above the highest of them). The order decides
everything; a random order is a fair, unbiased guess. Trying several seeded
orders and keeping the best makes the result far less erratic than a single
draw while staying deterministic: the same seed always gives the same offsets.
"""

from __future__ import annotations

import random

from deeploy_core.plugin_api import AllocationProblem, AllocationSolution


def tetris_offsets(problem: AllocationProblem, order: list[str]) -> dict[str, int]:
    """Offsets of the Tetris placement of ``problem``'s blocks in ``order``."""
    return problem.stacked(order)


def peak_of(problem: AllocationProblem, offsets: dict[str, int]) -> int:
    return max((offsets[block.id] + block.size for block in problem.blocks), default=0)


class TetrisRandomAllocator:
    """Best of ``tries`` seeded random Tetris orders (stops early at the lower bound)."""

    name = "tetris-random"

    def __init__(self, seed: int = 0, tries: int = 64) -> None:
        if tries < 1:
            raise ValueError(f"tries must be >= 1, got {tries}")
        self.seed, self.tries = seed, tries

    def best_order(self, problem: AllocationProblem) -> tuple[dict[str, int], int]:
        """The lowest-peak placement over the seeded orders, and its peak."""
        rng = random.Random(self.seed)
        ids = sorted(block.id for block in problem.blocks)
        bound = problem.lower_bound()
        best: tuple[dict[str, int], int] | None = None
        for _ in range(self.tries):
            order = ids[:]
            rng.shuffle(order)
            offsets = tetris_offsets(problem, order)
            peak = peak_of(problem, offsets)
            if best is None or peak < best[1]:
                best = (offsets, peak)
            if peak <= bound:
                break
        assert best is not None
        return best

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        offsets, peak = self.best_order(problem)
        if problem.capacity is not None and peak > problem.capacity:
            return AllocationSolution(offsets, feasible=False, reason=(
                f"{self.name}: the best of {self.tries} orders needs {peak} bytes, capacity is {problem.capacity} "
                f"(lower bound {problem.lower_bound()})"))
        return AllocationSolution(offsets)
