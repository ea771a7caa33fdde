"""Registers what the core ships itself, so that it is listed and selected like plugin extensions."""

from __future__ import annotations

from typing import Callable

from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.extensions import AllocatorExtension
from deeploy_core.hookspecs import hookimpl

DEFAULT_ALLOCATOR = "first-fit"


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    """The built-in allocator, used when the user names none."""
    register(
        AllocatorExtension(
            name=DEFAULT_ALLOCATOR,
            factory=FirstFitAllocator,
            description="greedy largest-first, lowest-offset placement (built in)",
        )
    )
