"""An output folder for a microcontroller board says in its README how that folder builds: the cross compiler and
core flags its Makefile uses, where a user-provided library comes from, what ``make test`` runs on, and how to time
layers on the board (``make profile`` is a host program's).  A plain C folder keeps its host README."""

from __future__ import annotations

from deeploy_core.codegen.folder_readme import folder_readme
from deeploy_core.codegen.runtime_files import RuntimeFiles
from deeploy_core.mapping.external_library import ExternalLibrary
from deeploy_core.platform.board import BoardSupport

BOARD = BoardSupport(name="mps3-an547", compiler="arm-none-eabi-gcc",
                     arch_flags=("-mcpu=cortex-m55", "-mthumb", "-mfloat-abi=hard"),
                     emulator=("qemu-system-arm", "-M", "mps3-an547", "-kernel"))
LIBRARY = ExternalLibrary(variable="CMSIS_NN_PATH", marker="Include/arm_nnfunctions.h",
                          where="https://github.com/ARM-software/CMSIS-NN",
                          sources=("Source/A/a.c", "Source/B/b.c"), default_root="/home/someone/CMSIS-NN")


def _runtime(board: BoardSupport | None, external: tuple[ExternalLibrary, ...]) -> RuntimeFiles:
    return RuntimeFiles(library_sources={}, headers={}, host_sources={}, host_headers={}, external=external,
                        board=board)


def test_a_board_folder_names_its_compiler_flags_library_and_board() -> None:
    text = folder_readme("net", "cortex-m55", _runtime(BOARD, (LIBRARY,)), self_test=True)
    assert "# libnetwork.a (C99) with arm-none-eabi-gcc -mcpu=cortex-m55 -mthumb -mfloat-abi=hard" in text
    assert "cortex-m4" not in text, "a Cortex-M55 folder must not suggest the M4's flags"
    assert "make CMSIS_NN_PATH=/path/to/it" in text and "## CMSIS_NN_PATH" in text
    assert "https://github.com/ARM-software/CMSIS-NN" in text and "compiles the 2 of its files" in text
    assert "make test                              # the self-test, run on mps3-an547 (qemu-system-arm)" in text
    assert "clock_gettime" not in text and "define that function in your firmware" in text
    assert "/home/someone" not in text, "the compile-time root is the Makefile's business, not the README's"


def test_a_library_no_layer_calls_and_a_folder_without_self_test_say_nothing_of_them() -> None:
    unused = ExternalLibrary(variable="CMSIS_NN_PATH", marker="Include/arm_nnfunctions.h", where="https://x")
    text = folder_readme("net", "cortex-m55", _runtime(BOARD, (unused,)), self_test=False)
    assert "CMSIS_NN_PATH" not in text and "make test" not in text


def test_a_host_folder_keeps_the_host_readme() -> None:
    text = folder_readme("net", "generic-c", _runtime(None, ()), self_test=True)
    assert "make profile REPEATS=20" in text and "clock_gettime" in text and "Cortex-M4F" in text
