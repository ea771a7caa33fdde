"""Validating on a board: build the harness with the folder's Makefile, run it on the emulator, count it.

A platform with a board (``RuntimeLibrary.board``) computes on its core, not
on the host: ``int32_t`` is ``long``, the C library is newlib, kernels may be
hand-written for the core (CMSIS-NN).  So its outputs are taken from the board's
emulator (QEMU), running a program the folder's own Makefile linked with the
board's cross compiler, start-up code and linker script (``make program``), as
a user's firmware would be.  The program is built with ``-DDC_PROFILE``; when
the instruction counter can run here, the same ELF runs once more under it
for instructions and estimated cycles per layer.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from deeploy_core.codegen.output_folder import build_flags
from deeploy_core.codegen.profile_marks import PROFILE_DEFINE
from deeploy_core.emulation.instruction_profile import InstructionProfile
from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.platform.board import BoardSupport
from deeploy_core.platform.tool_packages import DEBIAN_PACKAGES
from deeploy_core.validate.board_harness import BOARD_HARNESS_NAME, board_harness_source, parse_outputs
from deeploy_core.validate.build import BuildError, Toolchain, make_environment, runtime_objects
from deeploy_core.validate.target_result import TargetCounts, TargetRun

BOARD_PROGRAM = "network.elf"
"""The program ``make program`` links in the output folder for the board."""

HOST_TOOLS = ("CC", "AR")
"""Left out of the board build's environment: the Makefile then picks the board's cross compiler and archiver."""

RUN_TIMEOUT = 600
"""Seconds the emulator may run before validation gives up."""


def _require(tool: str, what: str) -> None:
    if shutil.which(tool) is None:
        package = DEBIAN_PACKAGES.get(Path(tool).name)
        hint = f"install Debian's {package}" if package else "install it or put it on PATH"
        raise DeeployError(f"{tool} not found: validating on the board needs it to {what}; {hint}")


def build_board_program(generated: GeneratedNetwork, directory: Path,
                        inputs: dict[str, np.ndarray] | list[dict[str, np.ndarray]],
                        repeats: int, cache_dir: Path | None = None) -> Path:
    """Write the folder and the board harness into ``directory`` and link the harness for the board.

    With ``cache_dir`` the runtime kernels come precompiled for the board from the object cache the host
    builds use too (keyed by compiler, flags and sources), as hundreds of conformance builds share them.

    A ``$(error ...)`` of the Makefile (e.g. ``CMSIS_NN_PATH`` unset) is the
    error's one line; a compiler error is a :class:`BuildError` with the
    compiler's first lines.
    """
    board = generated.runtime.board
    assert board is not None
    if shutil.which("make") is None:
        raise DeeployError("'make' not found: validate builds the output folder with its Makefile; install make")
    _require(board.compiler, f"cross-compile for {board.name}")
    generated.write(directory)
    (directory / BOARD_HARNESS_NAME).write_text(
        board_harness_source(generated.inputs, generated.outputs, inputs, repeats, generated.api), encoding="utf-8")
    flags = build_flags(generated.runtime)
    # In parallel: a network on CMSIS-NN compiles a dozen of its sources besides its own.
    command = ["make", "-s", f"-j{os.cpu_count() or 1}", "-C", str(directory), "program",
               f"PROGRAM={BOARD_PROGRAM}", f"PROGRAM_SRCS={BOARD_HARNESS_NAME}",
               f"CFLAGS={shlex.join([*flags.optimisation, *flags.warnings, f'-D{PROFILE_DEFINE}'])}"]
    if cache_dir is not None:
        toolchain = Toolchain((board.compiler,), (*board.arch_flags, *flags.optimisation, *flags.warnings,
                                                  f"-D{PROFILE_DEFINE}"))
        objects = runtime_objects(generated.runtime, toolchain, cache_dir)
        placed = generated.placed_runtime.library_sources.values()
        command.append(f"RUNTIME_OBJS={shlex.join(str(objects[path]) for path in placed)}")
    result = subprocess.run(command, capture_output=True, text=True, env=make_environment(*HOST_TOOLS))
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        for line in lines:
            if "*** " in line:  # the Makefile's own one-line error
                raise DeeployError(line.split("*** ", 1)[1].removesuffix(".  Stop.").strip())
        raise BuildError(f"building the generated network for {board.name} failed (exit {result.returncode})",
                         details=tuple(lines[:20]))
    return directory / BOARD_PROGRAM


def run_on_board(board: BoardSupport, program: Path, generated: GeneratedNetwork) -> tuple[list[np.ndarray], str]:
    """The outputs the program prints on the board's emulator, and everything it printed."""
    if not board.emulator:
        raise DeeployError(f"the platform's board {board.name} names no emulator: validate cannot run there")
    _require(board.emulator[0], f"emulate {board.name}")
    # Files, not pipes: QEMU writes the guest's output without blocking and drops what a full pipe does not
    # take, so a network with large outputs lost lines whenever this process read the pipe too slowly.
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            returncode = subprocess.run([*board.emulator, str(program)], stdout=out, stderr=err,
                                        stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT).returncode
        except subprocess.TimeoutExpired as error:
            raise DeeployError(f"the generated network did not finish on {board.name} within {RUN_TIMEOUT} s"
                               ) from error
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    if returncode != 0:
        said = (stderr.strip() or stdout.strip()).splitlines()
        raise DeeployError(f"the generated network failed on {board.name} (exit {returncode})"
                           + (f": {said[-1][:300]}" if said else ""))
    return parse_outputs(stdout, generated.outputs), stdout


def count_on_board(board: BoardSupport, program: Path, generated: GeneratedNetwork, printed: str) -> TargetRun:
    """The board run's record, with the counter's figures when it can run here and agrees with the emulator."""
    emulator = Path(board.emulator[0]).name if board.emulator else ""
    try:
        profile = _counted_profile(board, program, generated)
    except _NotCounted as reason:
        return TargetRun(board.name, emulator, note=f"not counted: {reason}")
    if profile.exit_status != 0 or profile.stdout != printed:
        return TargetRun(board.name, emulator, note=f"not counted: the counted run ended with status "
                                                    f"{profile.exit_status} or printed other outputs than "
                                                    f"{emulator}")
    return TargetRun(board.name, emulator, TargetCounts.of(profile, board.counter))


class _NotCounted(Exception):
    """Why the board's counter gave no profile (its message is the reason)."""


def _counted_profile(board: BoardSupport, program: Path, generated: GeneratedNetwork) -> InstructionProfile:
    """The program run again under the board's counter: Unicorn's Cortex-M4, or the emulator's own trace
    (:mod:`deeploy_core.emulation.qemu_trace_counting`)."""
    if board.counter == "qemu-trace":
        from deeploy_core.emulation.qemu_trace_counting import TraceCountingError, count_from_qemu_trace

        try:
            return count_from_qemu_trace(board.emulator, program, len(generated.report["layers"]),
                                         mark_symbol=generated.api.profile_mark, timeout=RUN_TIMEOUT)
        except (TraceCountingError, subprocess.TimeoutExpired) as error:
            raise _NotCounted(f"the traced run stopped: {str(error).splitlines()[0]}") from error
    if not board.counter:
        raise _NotCounted("the platform's board names no instruction counter")
    from deeploy_core.emulation.instruction_counting import CountingError, count_instructions, missing

    reason = missing()
    if reason:
        raise _NotCounted(reason)
    try:
        return count_instructions(program, mark_symbol=generated.api.profile_mark)
    except CountingError as error:
        raise _NotCounted(f"the counter stopped: {str(error).splitlines()[0]}") from error


def validate_on_board(generated: GeneratedNetwork, directory: Path, inputs: dict[str, np.ndarray],
                      repeats: int, cache_dir: Path | None = None) -> tuple[list[np.ndarray], TargetRun]:
    """Build for the network's board, run there, count: the outputs and the record of the run."""
    board = generated.runtime.board
    assert board is not None
    if board.emulator:  # before the build: a missing emulator is known at once
        _require(board.emulator[0], f"emulate {board.name}")
    program = build_board_program(generated, directory, inputs, repeats, cache_dir)
    outputs, printed = run_on_board(board, program, generated)
    return outputs, count_on_board(board, program, generated, printed)
