"""Registers the Tetris allocators with deeploy_core."""

from __future__ import annotations

from typing import Callable

from deeploy_core.plugin_api import AllocatorExtension, OptionSpec, hookimpl
from deeploy_tetris.co_optimised import TetrisCoOptAllocator
from deeploy_tetris.random_order import TetrisRandomAllocator

VERSION = "0.1.0"

# The allocators' options: keywords of the allocator classes, declared with the same defaults.
SEED = OptionSpec("seed", int, 0, minimum=0, help="seed of the random block orders (same seed, same offsets)")
TRIES = OptionSpec("tries", int, 64, minimum=1,
                   help="random orders tried, the best kept (stops early at the lower bound)")
TIME_LIMIT = OptionSpec("time_limit", float, 5.0, minimum=0,
                        help="CP-SAT's deterministic time limit in seconds for improving the best random order")


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    register(AllocatorExtension(
        name=TetrisRandomAllocator.name, factory=TetrisRandomAllocator, version=VERSION, options=(SEED, TRIES),
        description="best of seeded random orders, each block falling onto the blocks alive with it"))
    register(AllocatorExtension(
        name=TetrisCoOptAllocator.name, factory=TetrisCoOptAllocator, version=VERSION,
        options=(SEED, TIME_LIMIT, TRIES),
        description="block order chosen by CP-SAT (with the tile sizes when tiling); never worse than tetris-random"))
