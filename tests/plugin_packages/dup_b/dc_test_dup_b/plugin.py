"""Registers an allocator under a name another test plugin also uses."""

from deeploy_core import AllocatorExtension, hookimpl
from deeploy_core.allocation import FirstFitAllocator


@hookimpl
def register_allocators(register):
    register(AllocatorExtension(name="shared-name", factory=FirstFitAllocator, description="a duplicate"))
