"""Registers the MiniMalloc allocator with deeploy_core (entry point ``minimalloc``)."""

from __future__ import annotations

from typing import Callable

from deeploy_core.plugin_api import AllocatorExtension, OptionSpec, hookimpl

from deeploy_minimalloc.allocator import DEFAULT_TIME_LIMIT, MODES, MiniMallocAllocator
from deeploy_minimalloc.backend import BACKEND_ENV, BACKENDS
from deeploy_minimalloc.preordering import DEFAULT_PREORDERING

VERSION = "0.1.0"

OPTIONS = (
    OptionSpec("mode", str, "auto", choices=MODES,
               help="decide the capacity given (decide), find the smallest peak (minimise), or decide when there is "
                    "a capacity and minimise otherwise (auto)"),
    OptionSpec("time_limit", float, DEFAULT_TIME_LIMIT, minimum=0,
               help="seconds for one solve; decides only between found and gave up, never which offsets"),
    OptionSpec("node_limit", int, None, minimum=1,
               help="search nodes per heuristic, a deterministic alternative to the time limit; unset: no limit when "
                    "deciding, a budget per probe when minimising"),
    OptionSpec("preordering", str, ",".join(DEFAULT_PREORDERING),
               help="static preordering heuristics tried in turn, comma-separated (letters W, A, T)"),
    OptionSpec("backend", str, None, choices=BACKENDS,
               help=f"search implementation; unset: the {BACKEND_ENV} variable, else auto"),
)
"""The allocator's options, each a keyword of :class:`MiniMallocAllocator` with the same default."""


@hookimpl
def register_allocators(register: Callable[[AllocatorExtension], None]) -> None:
    register(AllocatorExtension(
        name=MiniMallocAllocator.name, factory=MiniMallocAllocator, version=VERSION, options=OPTIONS,
        description="MiniMalloc (Moffitt, ASPLOS 2023): exact search over canonical placements with spatial "
                    "inference and dominance pruning; decides a capacity or minimises the peak"))
