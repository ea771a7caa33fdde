"""Registers the Tetris allocators with deeploy_core."""

from __future__ import annotations

from typing import Callable

from deeploy_core import AllocatorExtension, hookimpl
from deeploy_tetris.co_optimised import TetrisCoOptAllocator
from deeploy_tetris.random_order import TetrisRandomAllocator

VERSION = "0.1.0"


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    register(AllocatorExtension(
        name=TetrisRandomAllocator.name, factory=TetrisRandomAllocator, version=VERSION,
        description="best of seeded random orders, each block falling onto the blocks alive with it"))
    register(AllocatorExtension(
        name=TetrisCoOptAllocator.name, factory=TetrisCoOptAllocator, version=VERSION,
        description="block order chosen by CP-SAT (with the tile sizes when tiling); never worse than tetris-random"))
