"""Registers cleanly, but its factories make the wrong things: found only when a user selects them."""

from deeploy_core import AllocatorExtension, PlatformExtension, hookimpl


class StringOffsets:
    """Answers with a dict of strings instead of an AllocationSolution."""

    def solve(self, problem):
        return {block.id: "0" for block in problem.blocks}


class Crashing:
    def solve(self, problem):
        raise ZeroDivisionError("division by zero in the allocator")


@hookimpl
def register_platforms(register):
    register(PlatformExtension(name="none-platform", factory=lambda settings: None, description="makes None"))


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="string-offsets", factory=StringOffsets, description="malformed answers"))
    register(AllocatorExtension(name="crashing", factory=Crashing, description="raises in solve"))
