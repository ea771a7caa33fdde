"""The tiled-allocation conformance suite fails an allocator that refuses a tiling the tiler accepted.

The suite itself must be able to fail: an allocator that places blocks into
half the capacity it is given (as if it reserved the rest) refuses tilings the
tiler's model accepted, and the suite's check raises on it; first fit alone
passes the same check.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest

from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.allocation.problem import AllocationProblem, AllocationSolution
from deeploy_core.plugin_api import AllocatorExtension, hookimpl
from deeploy_core.testing import TiledAllocationConformance
from deeploy_core.testing.peer_tests import peer_tests_root
from deeploy_generic_c import plugin as generic_c_plugin


class HalfCapacity(FirstFitAllocator):
    """First fit into half the capacity: a broken allocator for the suite to catch."""

    name = "half-capacity"

    def solve(self, problem: AllocationProblem) -> AllocationSolution:
        capacity = None if problem.capacity is None else problem.capacity // 2
        return super().solve(AllocationProblem(problem.blocks, capacity, problem.alignment))


class HalfCapacityPlugin:
    @hookimpl
    def register_allocators(self, register: Callable[[AllocatorExtension], None]) -> None:
        register(AllocatorExtension(name=HalfCapacity.name, factory=HalfCapacity, version="0",
                                    description="places blocks into half the capacity (broken on purpose)"))


class BrokenAllocation(TiledAllocationConformance):
    plugins = ((generic_c_plugin, "generic-c"), (HalfCapacityPlugin(), "half-capacity"))
    tiler = "single-buffering"
    level_sizes = (64000, 3000)  # miniMobileNet's layers are tiled at 3000 bytes and fill most of it


class FirstFitOnly(TiledAllocationConformance):
    plugins = ((generic_c_plugin, "generic-c"),)
    tiler = "single-buffering"
    level_sizes = (64000, 3000)


@pytest.mark.skipif(peer_tests_root() is None, reason="Deeploy peer tests not found: ../shared/peer-tests/deeploy")
def test_the_suite_fails_an_allocator_that_refuses_an_accepted_tiling() -> None:
    suite: Any = BrokenAllocation()
    with pytest.raises(AssertionError, match="half-capacity.*refused a tiling the tiler accepted"):
        suite.test_no_allocator_refuses_a_tiling_the_tiler_accepted("Models/miniMobileNet", 1, "none",
                                                                   BrokenAllocation.make_host())
    correct: Any = FirstFitOnly()
    correct.test_no_allocator_refuses_a_tiling_the_tiler_accepted("Models/miniMobileNet", 1, "none",
                                                                 FirstFitOnly.make_host())
