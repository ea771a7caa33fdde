"""Static planning of the one activation arena.

All activations, inputs, outputs and scratch buffers share one statically
allocated arena.  Offsets come from the allocator the user selected (through
the allocator hook) and are checked by the core's own verifier before any code
is written: an allocator plugin can be wrong, the generated code must not be.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deeploy_core.allocation import AllocationBlock, AllocationProblem, find_allocation_errors
from deeploy_core.allocation.checked_solve import allocator_error, solve_checked
from deeploy_core.extension_origin import ExtensionOrigin
from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer
from deeploy_core.midend.lifetimes import Lifetime, compute_lifetimes


def align_up(value: int, alignment: int) -> int:
    """``value`` rounded up to a multiple of ``alignment``."""
    return -(-value // alignment) * alignment


@dataclass
class MemoryPlan:
    """Arena size, offsets and the figures the report shows."""

    arena_bytes: int
    lower_bound: int
    lifetimes: dict[str, Lifetime]
    offsets: dict[str, int] = field(default_factory=dict)
    allocator: str = ""
    sizes: dict[str, int] = field(default_factory=dict)
    """Bytes each buffer occupies in the arena (rounded up to the alignment)."""
    alignment: int = 1

    def allocation_problem(self, capacity: int | None = None) -> AllocationProblem:
        """The problem the allocator solved (e.g. to export it as a benchmark instance)."""
        return AllocationProblem(
            tuple(AllocationBlock(name, life.first, life.end, self.sizes[name]) for name, life in self.lifetimes.items()),
            capacity, self.alignment)

    def to_json(self) -> dict[str, Any]:
        return {
            "arena_bytes": self.arena_bytes,
            "lower_bound_bytes": self.lower_bound,
            "allocator": self.allocator,
            "buffers": [
                {"name": name, "offset": self.offsets[name], "size": self.sizes.get(name), "first_step": life.first,
                 "end_step": life.end}
                for name, life in self.lifetimes.items()
            ],
        }


def plan_arena(layers: list[Layer], ctxt: NetworkContext, allocator: Any, allocator_name: str, alignment: int,
               origin: ExtensionOrigin | None = None, lifetimes: dict[str, Lifetime] | None = None) -> MemoryPlan:
    """Allocate every arena buffer and store its offset in the context.

    ``origin`` is the plugin that registered the allocator: a failing or wrong
    allocator is reported naming it.  ``lifetimes`` replaces the layer-by-layer
    ones (a fused pattern keeps every tensor it touches alive while it runs).
    """
    lifetimes = lifetimes if lifetimes is not None else compute_lifetimes(layers, ctxt)
    blocks = tuple(
        AllocationBlock(name, life.first, life.end, align_up(max(ctxt[name].size_bytes, 1), alignment))
        for name, life in lifetimes.items()
    )
    problem = AllocationProblem(blocks=blocks, alignment=alignment)
    solution = solve_checked(allocator, problem, allocator_name, origin)
    if not solution.feasible:
        raise allocator_error(allocator_name, origin, ValueError(f"found no arena layout: {solution.reason}"))
    errors = find_allocation_errors(problem, solution)
    if errors:
        raise allocator_error(allocator_name, origin, ValueError(f"invalid arena layout: {errors[0]}"))
    for name, offset in solution.offsets.items():
        ctxt[name].offset = offset
    return MemoryPlan(
        arena_bytes=align_up(solution.peak(problem), alignment),
        lower_bound=problem.lower_bound(),
        lifetimes=lifetimes,
        offsets=dict(solution.offsets),
        allocator=allocator_name,
        sizes={block.id: block.size for block in blocks},
        alignment=alignment,
    )
