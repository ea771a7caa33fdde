"""The Makefile and CMake lines of a folder whose platform runs on a board (a microcontroller), not the host.

The library is cross-compiled with the board's compiler and core flags
unless the user gives ``CC``/``DC_ARCH``; ``make test`` links the self-test
with the board's start-up code and linker script (``board/``) and runs it on
the board's emulator, whose exit status is the self-test's.
"""

from __future__ import annotations

import shlex

from deeploy_core.codegen.runtime_files import BOARD_FILES, RuntimeFiles
from deeploy_core.platform.board import BoardSupport

SELF_TEST_ELF = "network_selftest.elf"


def board_make_variables(placed: RuntimeFiles) -> list[str]:
    """The cross compiler (unless the user names one), the core flags every object is compiled with, and the
    start-up objects and link flags of the board's programs (self-test, ``make program``)."""
    board = placed.board
    assert board is not None
    tool = board.compiler.removesuffix("gcc")
    startup = [path for path in sorted(placed.board_files) if path.endswith(".c")]
    script = f"{BOARD_FILES}/{board.linker_script.name}" if board.linker_script else None
    link = [*board.link_flags, *(["-T", script] if script else [])]
    return [
        f"# The {board.name} board: its cross compiler unless you name one (make CC=... AR=...), its core flags",
        "ifeq ($(origin CC),default)",
        f"CC := {board.compiler}",
        "endif",
        "ifeq ($(origin AR),default)",
        f"AR := {tool}ar",
        "endif",
        f"DC_ARCH ?= {' '.join(board.arch_flags)}",
        "# The board's start-up code and memory map, linked into the self-test and make program (not the library)",
        f"DC_BOARD_SRCS := {' '.join(startup)}",
        "DC_BOARD_OBJS := $(patsubst %.c,$(OBJDIR)/%.o,$(DC_BOARD_SRCS))",
        f"DC_BOARD_LINK := {' '.join(link)}",
        f"EMULATOR ?= {shlex.join(board.emulator)}",
    ]


def board_self_test(placed: RuntimeFiles, self_test_objects: str) -> list[str]:
    """``make test`` on the board: link the self-test with the start-up code, run it on the emulator."""
    board = placed.board
    assert board is not None
    script = f" {BOARD_FILES}/{board.linker_script.name}" if board.linker_script else ""
    return [
        f"{SELF_TEST_ELF}: {self_test_objects} $(DC_BOARD_OBJS) libnetwork.a{script}",
        f"\t$(CC) $(DC_STD) $(DC_ARCH) $(CFLAGS) $(LDFLAGS) $(DC_GC) $(DC_BOARD_LINK) -o $@ {self_test_objects} "
        "$(DC_BOARD_OBJS) libnetwork.a $(LDLIBS)",
        "",
        f"# The self-test on the emulated {board.name}; its exit status is the self-test's.",
        f"test: {SELF_TEST_ELF}",
        f"\t$(EMULATOR) {SELF_TEST_ELF}",
        "",
    ]
