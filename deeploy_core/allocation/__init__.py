"""Static memory allocation: the problem, an independent verifier and the built-in allocator."""

from deeploy_core.allocation.first_fit import FirstFitAllocator
from deeploy_core.allocation.problem import AllocationBlock, AllocationProblem, AllocationSolution
from deeploy_core.allocation.verify import find_allocation_errors

__all__ = [
    "AllocationBlock",
    "AllocationProblem",
    "AllocationSolution",
    "FirstFitAllocator",
    "find_allocation_errors",
]
