"""Where the generated code keeps the activation arena and the constants, as platform data.

On a host or a plain microcontroller the arena is a static array and the
constants are ``const`` data the linker places. A multi-level SoC instead
hands out its memories at run time (an L2 base address from the SDK) and
expects constants to be copied into a level before use (from flash or L3 at
start-up). Both are a few lines of C that differ per platform; keeping them
here lets every platform share one code generator.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The arena as a static union of element arrays (the default; ``union`` is its tag, defined before it in
#: ``Network.c``: :mod:`deeploy_core.codegen.arena_views`).
STATIC_ARENA_DECLARATION = "static union {union} dc_arena;"


@dataclass(frozen=True)
class StaticPlacement:
    """C templates placing the arena (and optionally the constants) in memory.

    ``arena_declaration`` is formatted with ``bytes`` (the arena size, plus the
    constants' copies when they are placed after it, rounded up to 8) and ``union`` (the tag of the union of
    element arrays of that size, already defined); ``arena_base`` is a ``uint8_t *`` expression for its first byte.
    With ``constants_in_arena_level`` every constant tensor is copied by
    ``InitNetwork`` into the same memory, right after the arena (each aligned to
    ``constant_alignment``), and the kernels read that copy (a constant placed in
    one of the ``level_bases`` levels is copied there instead). ``init_lines`` run
    at the start of ``InitNetwork`` (e.g. bringing up the memories);
    ``headers`` and ``definitions`` are what those lines need.
    """

    arena_declaration: str = STATIC_ARENA_DECLARATION
    arena_base: str = "dc_arena.u8"
    constants_in_arena_level: bool = False
    constant_alignment: int = 16
    headers: tuple[str, ...] = ()
    definitions: tuple[str, ...] = ()
    init_lines: tuple[str, ...] = ()
    level_bases: tuple[tuple[str, str], ...] = ()
    """Memory levels beyond the arena's where tensors may live when the arena's level cannot hold them all, each
    with a ``uint8_t *`` expression of its base (``(("L3", "pulp_l3_base()"),)``); a buffer whose storage the
    tiler placed in one of them is addressed from that base, and a constant placed there is copied there by
    ``InitNetwork``.  Empty: every tensor stays in the arena's level."""


STATIC_ARRAYS = StaticPlacement()
"""Arena and constants as static data: portable C, any host or microcontroller."""
