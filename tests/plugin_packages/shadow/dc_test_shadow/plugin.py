"""Registers a platform, an allocator and a tiler under names that are taken, and one allocator that is not.

The taken names belong to an installed plugin (platform ``generic-c``) and to
the core's built-ins (allocator ``first-fit``, tiler ``single-buffering``).
Their factories raise, so a test notices at once if one of these registrations
is ever used instead of the original.  ``shadow-bump`` is this plugin's own
name and must keep working although the plugin lost the others.
"""

from deeploy_core import AllocatorExtension, PlatformExtension, TilerExtension, hookimpl
from deeploy_core.allocation import AllocationSolution


def must_not_be_used(*args, **options):
    raise RuntimeError("the shadow plugin's duplicate registration was used")


class BumpAllocator:
    """Places every block after the previous one (no reuse), so its arena is recognisably larger."""

    def solve(self, problem):
        offsets, top = {}, 0
        for block in problem.blocks:
            top = -(-top // problem.alignment) * problem.alignment
            offsets[block.id], top = top, top + block.size
        if problem.capacity is not None and top > problem.capacity:
            return AllocationSolution(offsets=offsets, feasible=False, reason=f"needs {top} bytes")
        return AllocationSolution(offsets=offsets)


@hookimpl
def register_platforms(register):
    register(PlatformExtension(name="generic-c", factory=must_not_be_used, description="a duplicate"))


@hookimpl
def register_tilers(register):
    register(TilerExtension(name="single-buffering", factory=must_not_be_used, description="a duplicate"))


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="first-fit", factory=must_not_be_used, description="a duplicate"))
    register(AllocatorExtension(name="shadow-bump", factory=BumpAllocator, description="bump pointer, no reuse"))
