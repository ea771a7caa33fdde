"""How an allocator takes part in the tiler's CP-SAT model (co-optimisation of placement and tile sizes).

An ordinary allocator sees fixed sizes after the tiler has chosen tile sizes.
A co-optimising allocator instead adds its own variables and constraints to
the tiler's model while the tile sizes are still open: it receives every block
the compute level must hold, each with a *size expression* over the tiler's
variables, and must constrain the blocks to fit the capacity. The tiler then
solves one model for both questions, so a tile size is never chosen that the
placement cannot realise (and vice versa).

The contract is deliberately small:

* the allocator implements :class:`TilingModelAllocator` (one method);
* it returns a :class:`ModelPlacement`, which reads the chosen block *order*
  (lowest address first) back from the solved model;
* the tiler turns that order into offsets with the actual, aligned block sizes
  (each block directly above the time-overlapping blocks placed before it)
  and verifies the resulting map independently, as it verifies every map.

Handing back an order rather than raw offsets keeps the model's slack
(alignment padding is modelled as an upper bound) out of the generated code
and lets the core keep the verified map as the single source of truth.

Example (an allocator that keeps the order fixed and only demands that the
stacked blocks fit)::

    class StackInModel:
        def add_to_tiling_model(self, model, blocks, capacity, label):
            model.Add(sum(block.size for block in blocks) <= capacity)
            return FixedOrder([block.id for block in blocks])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

if TYPE_CHECKING:  # only the types: importing OR-tools costs a quarter second that untiled compiles never need
    from ortools.sat.python import cp_model

    #: A block size in the model: an integer or an affine expression of the tiler's variables.
    SizeExpression = cp_model.LinearExprT


@dataclass(frozen=True)
class ModelBlock:
    """A block of a memory level whose size the tiler has not fixed yet.

    ``size`` is an expression over the tiler's variables (bytes, alignment slack
    included), ``max_size`` its largest possible value; ``[lower, upper)`` is the
    block's lifetime in layer steps, as for :class:`~deeploy_core.allocation.AllocationBlock`.
    """

    id: str
    lower: int
    upper: int
    size: SizeExpression
    max_size: int

    def overlaps_in_time(self, other: ModelBlock) -> bool:
        return self.lower < other.upper and other.lower < self.upper


class ModelPlacement(Protocol):
    """Reads an allocator's decision back from the solved model."""

    def order(self, solver: cp_model.CpSolver) -> list[str]:
        """Block ids, lowest address first."""


@runtime_checkable
class TilingModelAllocator(Protocol):
    """An allocator that can place blocks inside the tiler's CP-SAT model.

    The tiler calls :meth:`add_to_tiling_model` once per group of blocks that
    share the compute level (today: one call per tiled layer) *instead of*
    adding its own "sum of sizes ≤ capacity" constraint, so the allocator's
    constraints are the only memory constraints of that group.
    """

    def add_to_tiling_model(self, model: cp_model.CpModel, blocks: Sequence[ModelBlock], capacity: int,
                            label: str) -> ModelPlacement:
        """Add variables and constraints keeping ``blocks`` within ``capacity``; name them after ``label``."""


@dataclass(frozen=True)
class FixedOrder:
    """A placement whose order does not depend on the solution."""

    ids: tuple[str, ...] | list[str]

    def order(self, solver: cp_model.CpSolver) -> list[str]:
        return list(self.ids)


def stack_in_order(order: Sequence[str], sizes: dict[str, int], lifetimes: dict[str, tuple[int, int]],
                   alignment: int) -> dict[str, int]:
    """Offsets for blocks placed in ``order``, each directly above the earlier blocks it overlaps in time.

    This is the Tetris placement rule; blocks missing from ``order`` follow it
    in sorted id order, so a placement that knows only some blocks still yields
    a complete map.
    """
    placed: list[tuple[str, int]] = []
    offsets: dict[str, int] = {}
    rest = sorted(set(sizes) - set(order))
    for block in [*[b for b in order if b in sizes], *rest]:
        lower, upper = lifetimes[block]
        top = max((offset + sizes[other] for other, offset in placed
                   if lifetimes[other][0] < upper and lower < lifetimes[other][1]), default=0)
        offsets[block] = -(-top // alignment) * alignment
        placed.append((block, offsets[block]))
    return offsets
