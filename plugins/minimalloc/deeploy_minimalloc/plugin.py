"""Registers the MiniMalloc allocator with deeploy_core (entry point ``minimalloc``)."""

from __future__ import annotations

from typing import Callable

from deeploy_core import AllocatorExtension, hookimpl

from deeploy_minimalloc.allocator import MiniMallocAllocator

VERSION = "0.1.0"


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    register(AllocatorExtension(
        name=MiniMallocAllocator.name, factory=MiniMallocAllocator, version=VERSION,
        description="MiniMalloc (Moffitt, ASPLOS 2023): exact search over canonical placements with spatial "
                    "inference and dominance pruning; decides a capacity or minimises the peak"))
