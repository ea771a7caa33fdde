"""An independent check of allocation solutions.

Allocators are plugins and may be wrong; the core never trusts an offset it did
not check.  The check is deliberately simple (sweep over time, compare every
pair alive together) so that it is obviously right.
"""

from __future__ import annotations

from deeploy_core.allocation.problem import AllocationProblem, AllocationSolution


def find_allocation_errors(problem: AllocationProblem, solution: AllocationSolution) -> list[str]:
    """Every way ``solution`` violates ``problem``; an empty list means it is valid."""
    errors: list[str] = []
    blocks = sorted(problem.blocks, key=lambda block: (block.lower, block.id))
    for block in blocks:
        if block.id not in solution.offsets:
            errors.append(f"block {block.id!r} has no offset")
            continue
        offset = solution.offsets[block.id]
        if offset < 0:
            errors.append(f"block {block.id!r} has negative offset {offset}")
        if offset % problem.alignment:
            errors.append(f"block {block.id!r} offset {offset} is not aligned to {problem.alignment}")
        if problem.capacity is not None and offset + block.size > problem.capacity:
            errors.append(f"block {block.id!r} ends at {offset + block.size}, beyond capacity {problem.capacity}")
    unknown = sorted(set(solution.offsets) - {block.id for block in blocks})
    errors.extend(f"offset given for unknown block {block_id!r}" for block_id in unknown)
    placed = [block for block in blocks if block.id in solution.offsets]
    for index, first in enumerate(placed):
        first_start = solution.offsets[first.id]
        for second in placed[index + 1 :]:
            if second.lower >= first.upper:
                break
            second_start = solution.offsets[second.id]
            if first_start < second_start + second.size and second_start < first_start + first.size:
                errors.append(f"blocks {first.id!r} and {second.id!r} overlap in time and memory")
    return errors
