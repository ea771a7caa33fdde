"""Static memory allocation: the problem, an independent verifier and the built-in allocator."""

from deeploy_core.allocation.first_fit import FirstFitAllocator
from deeploy_core.allocation.instance_csv import read_instance, write_instance, write_solution
from deeploy_core.allocation.model_contribution import (
    FixedOrder,
    ModelBlock,
    ModelPlacement,
    TilingModelAllocator,
    stack_in_order,
)
from deeploy_core.allocation.problem import AllocationBlock, AllocationProblem, AllocationSolution
from deeploy_core.allocation.verify import find_allocation_errors

__all__ = [
    "AllocationBlock",
    "AllocationProblem",
    "AllocationSolution",
    "FirstFitAllocator",
    "FixedOrder",
    "ModelBlock",
    "ModelPlacement",
    "TilingModelAllocator",
    "find_allocation_errors",
    "read_instance",
    "stack_in_order",
    "write_instance",
    "write_solution",
]
