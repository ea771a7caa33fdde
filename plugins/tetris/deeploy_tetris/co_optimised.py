"""Tetris with the order chosen by CP-SAT, alone or together with the tiler's tile sizes.

Alone (``solve``), the blocks' time intervals are fixed and CP-SAT chooses
their addresses under a two-dimensional no-overlap constraint, minimising the
peak: every feasible answer is a Tetris placement in some order, and the model
searches over all orders at once. The best seeded random order is given as a
hint and as the incumbent, so the answer is never worse than Tetris-Random with
the same seed.

Inside the tiler (``add_to_tiling_model``), block sizes are still expressions
of the tile sizes; the same no-overlap constraint with variable-size address
intervals keeps every layer's blocks within the compute level, so the tile
sizes the tiler picks always have a placement. The tiler reads back the order
(lowest address first) and stacks the real, aligned blocks in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from deeploy_core.plugin_api import AllocationProblem, AllocationSolution, ModelBlock
from deeploy_tetris.random_order import TetrisRandomAllocator, peak_of

if TYPE_CHECKING:  # the solver is imported where it runs: loading the plugin must stay cheap
    from ortools.sat.python import cp_model


@dataclass(frozen=True)
class _AddressOrder:
    """Reads the block order from the address variables of a solved model."""

    addresses: tuple[tuple[str, cp_model.IntVar], ...]

    def order(self, solver: cp_model.CpSolver) -> list[str]:
        return [name for _, name in sorted((solver.value(var), name) for name, var in self.addresses)]


class TetrisCoOptAllocator:
    """CP-SAT over all Tetris orders (seeded, one worker, deterministic time limit)."""

    name = "tetris-coopt"

    def __init__(self, seed: int = 0, time_limit: float = 5.0, tries: int = 64) -> None:
        self.seed, self.time_limit = seed, time_limit
        self.random = TetrisRandomAllocator(seed=seed, tries=tries)

    # -- a whole allocation problem ----------------------------------------------------------------------

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        hint, hint_peak = self.random.best_order(problem)
        bound = problem.lower_bound()
        offsets, peak, proved = hint, hint_peak, hint_peak <= bound
        if not proved:
            found = self._improve(problem, hint, hint_peak)
            if found is not None:
                offsets, peak, proved = found
        if problem.capacity is not None and peak > problem.capacity:
            why = "no order fits" if proved else f"none found within the time limit ({self.time_limit} deterministic s)"
            return AllocationSolution(offsets, feasible=False, reason=(
                f"{self.name}: {why}; best placement needs {peak} bytes, capacity is {problem.capacity} "
                f"(lower bound {bound})"))
        return AllocationSolution(offsets)

    def _improve(self, problem: AllocationProblem, hint: dict[str, int], hint_peak: int
                 ) -> tuple[dict[str, int], int, bool] | None:
        """Minimise the peak below the hint's; None when the solver found nothing at all."""
        from ortools.sat.python import cp_model

        align = problem.alignment
        top = hint_peak if problem.capacity is None else max(hint_peak, problem.capacity)
        model = cp_model.CpModel()
        x_intervals, y_intervals, slots = [], [], {}
        peak = model.new_int_var(problem.lower_bound(), top, "peak")
        for index, block in enumerate(sorted(problem.blocks, key=lambda b: b.id)):
            slot = model.new_int_var(0, max(0, (top - block.size) // align), f"k{index}")
            address = slot * align
            slots[block.id] = slot
            x_intervals.append(model.new_fixed_size_interval_var(block.lower, block.upper - block.lower, f"t{index}"))
            y_intervals.append(model.new_fixed_size_interval_var(address, block.size, f"a{index}"))
            model.add(address + block.size <= peak)
            model.add_hint(slot, hint[block.id] // align)
        model.add_no_overlap_2d(x_intervals, y_intervals)
        model.minimize(peak)
        solver = cp_model.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = self.seed
        solver.parameters.max_deterministic_time = self.time_limit
        solver.parameters.catch_sigint_signal = False  # Ctrl-C is the command line's to handle, at once
        status = solver.solve(model)
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return None
        offsets = {block_id: int(solver.value(slot)) * align for block_id, slot in slots.items()}
        found = peak_of(problem, offsets)
        if found > hint_peak:
            return hint, hint_peak, False
        return offsets, found, status == cp_model.OPTIMAL

    # -- inside the tiler's model ------------------------------------------------------------------------

    def add_to_tiling_model(self, model: cp_model.CpModel, blocks: Sequence[ModelBlock], capacity: int,
                            label: str) -> _AddressOrder:
        """Addresses for ``blocks`` (sizes still open) that never overlap while alive and stay below ``capacity``."""
        x_intervals, y_intervals, addresses = [], [], []
        for index, block in enumerate(blocks):
            address = model.new_int_var(0, capacity, f"{label}_addr{index}")
            end = model.new_int_var(0, capacity, f"{label}_end{index}")
            x_intervals.append(model.new_fixed_size_interval_var(block.lower, block.upper - block.lower,
                                                                 f"{label}_life{index}"))
            y_intervals.append(model.new_interval_var(address, block.size, end, f"{label}_span{index}"))
            addresses.append((block.id, address))
        model.add_no_overlap_2d(x_intervals, y_intervals)
        return _AddressOrder(tuple(addresses))
