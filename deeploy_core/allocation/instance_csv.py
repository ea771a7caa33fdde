"""Allocation instances and solutions as CSV files (the MiniMalloc benchmark format).

An instance is ``id,lower,upper,size`` per block (half-open lifetimes); a
solution adds ``offset``. The format is the one the published MiniMalloc
benchmarks use, so allocator plugins can be measured on those instances and
on the memory maps our own compiler exports, with one reader.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from deeploy_core.allocation.problem import AllocationBlock, AllocationProblem, AllocationSolution
from deeploy_core.errors import DeeployError

INSTANCE_COLUMNS = ("id", "lower", "upper", "size")


def capacity_from_name(path: Path) -> int | None:
    """The capacity a benchmark file name carries (``A.1048576.csv`` → 1048576), if any."""
    found = re.fullmatch(r".*\.(\d+)", path.stem)
    return int(found.group(1)) if found else None


def read_instance(path: Path, capacity: int | None = None, alignment: int = 1) -> AllocationProblem:
    """Read an instance; ``capacity`` defaults to the one in the file name (None: minimise the peak)."""
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise DeeployError(f"{path}: cannot read ({error.strerror})") from None
    blocks = []
    for line, row in enumerate(rows, start=2):
        try:
            blocks.append(AllocationBlock(str(row["id"]), int(row["lower"]), int(row["upper"]), int(row["size"])))
        except (KeyError, TypeError, ValueError) as error:
            raise DeeployError(f"{path}:{line}: not an instance row with {','.join(INSTANCE_COLUMNS)} ({error})") from None
    try:
        return AllocationProblem(tuple(blocks), capacity if capacity is not None else capacity_from_name(path),
                                 alignment)
    except ValueError as error:
        raise DeeployError(f"{path}: {error}") from None


def write_instance(path: Path, problem: AllocationProblem) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(INSTANCE_COLUMNS)
        for block in problem.blocks:
            writer.writerow((block.id, block.lower, block.upper, block.size))


def write_solution(path: Path, problem: AllocationProblem, solution: AllocationSolution) -> None:
    """``id,lower,upper,size,offset`` per block, in the instance's order."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow((*INSTANCE_COLUMNS, "offset"))
        for block in problem.blocks:
            writer.writerow((block.id, block.lower, block.upper, block.size, solution.offsets[block.id]))
