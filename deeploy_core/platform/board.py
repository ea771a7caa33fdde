"""A board an output folder's self-test runs on: the cross compiler, the start-up files and the emulator.

A host platform's ``make test`` compiles the self-test with the host's
compiler and runs it.  A microcontroller platform's folder must do the same for
its core: cross-compile with the core's flags, link with a start-up file and a
linker script for a board, and run the result where the board is emulated.
The platform states that as data; the core writes the files into the folder's
``board/`` and the Makefile's ``test`` target from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class BoardSupport:
    """How the self-test is built for and run on one emulated board."""

    name: str
    """The board, as the README names it (``mps2-an386``)."""
    compiler: str
    """The cross compiler the Makefile uses unless the user gives ``CC`` (``arm-none-eabi-gcc``)."""
    arch_flags: tuple[str, ...]
    """Flags that select the core and its ABI; every object of the folder is compiled with them."""
    startup_sources: tuple[Path, ...] = ()
    """C files of the start-up code (vector table, reset handler), copied into ``board/`` and linked into the
    self-test only (a firmware brings its own)."""
    linker_script: Path | None = None
    """The board's memory map for the self-test's link, copied into ``board/``."""
    link_flags: tuple[str, ...] = ()
    """Flags of the self-test's link before the linker script (C library with semihosting, no start files)."""
    emulator: tuple[str, ...] = ()
    """The command that runs an ELF on the board, the ELF's path appended (``qemu-system-arm -M ... -kernel``);
    its exit status is the program's."""
    counter: str = "unicorn"
    """How ``validate`` counts the instructions of this board's programs (:mod:`deeploy_core.emulation`):
    ``"unicorn"`` runs the ELF again under Unicorn's Cortex-M4 with the MPS2 memory map (exact instructions and
    cycles estimated from the Cortex-M4 timing table); ``"qemu-trace"`` reads the emulator's own execution trace
    (exact instructions on any core QEMU emulates, no cycle estimate); ``""`` does not count."""
