"""Running an output folder's programs on emulated microcontrollers: linked for a board, run under QEMU.

:mod:`~deeploy_core.testing.cross_targets` shows that the library *builds*
for a Cortex-M4; only running it shows that it *computes* the same there:
``int32_t`` is ``long``, ``double`` is software, the C library is newlib, and
the optimiser sees a 32-bit Thumb target.  This module links a program (the
folder's self-test, or any ``main`` a caller brings, e.g. one that prints raw
output bytes) against the folder's ``libnetwork.a`` and runs it under QEMU
with semihosting, so ``printf`` reaches the host's standard output and
``main``'s return value becomes QEMU's exit status.

* Cortex-M4 (:data:`CORTEX_M4_MPS2`): QEMU's ``mps2-an386`` board, newlib
  with librdimon (Arm semihosting), and this package's own start-up code and
  linker script (``emulated/``): vector table, FPU switched on before
  ``main``, code and constants in the 4 MiB code RAM at 0x0, data, stack and
  heap in the 4 MiB data RAM at 0x20000000 (QEMU 7.2's ``info mtree``).
* rv32imc (:data:`RV32IMC_VIRT`): QEMU's ``virt`` board without firmware,
  picolibc's own start-up code and linker script with its semihosting
  library; the script is configured for the same 4 + 4 MiB split at
  0x80000000, where ``virt`` jumps after reset.

The library is built with the folder's own Makefile (``make CC=... CFLAGS=...
OBJDIR=...``), as a firmware engineer would; the optimisation level and any
extra flags are parameters, because a compiler's optimiser is one of the
things a network must survive.  Builds of one folder must run one at a time
(the Makefile writes ``libnetwork.a`` into the folder); each level keeps its
objects and its program in a build directory of its own.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.platform.tool_packages import DEBIAN_PACKAGES
from deeploy_core.testing.cross_targets import CORTEX_M4, CORTEX_M4_ARCH, LIBRARY, RV32IMC, RV32IMC_ARCH, CrossTarget

PACKAGE_FILES = Path(__file__).parent / "emulated"
"""The start-up code and linker script shipped with the package (written for this project)."""
MPS2_STARTUP = PACKAGE_FILES / "cortex_m4_startup.c"
"""Start-up code for QEMU's MPS2 Cortex-M boards: vector table, FPU on, data and bss, semihosting exit."""
MPS2_LINKER_SCRIPT = PACKAGE_FILES / "mps2_an386.ld"
"""4 MiB of code RAM at 0x0 and 4 MiB of data RAM at 0x20000000 (QEMU's mps2-an386 and mps2-an500)."""

SELF_TEST_MAINS = ("selftest/dc_selftest_main.c", "selftest/dc_selftest_data.c")
"""The sources ``compile --inputs`` writes into a folder (relative to it)."""

PASSED_LINE = "self-test passed"
"""What the self-test prints last when every output matched."""

FAULT_STATUS = 70
"""The exit status of a Cortex-M4 program stopped by a fault (``DC_FAULT_STATUS`` in the start-up code)."""

TIMEOUT_STATUS = 124
"""The exit status :func:`run_program` reports when QEMU did not finish in time (as coreutils' ``timeout``)."""

C_STANDARD = "-std=c99"
"""The language the folder's Makefile compiles with; the mains are compiled the same way."""

SECTION_FLAGS = ("-ffunction-sections", "-fdata-sections")
"""As the Makefile compiles the library: the link drops every function and constant nothing uses."""


@dataclass(frozen=True)
class EmulatedTarget:
    """A core on a board that QEMU emulates: how to compile, link and start a program for it."""

    name: str
    cross: CrossTarget
    """The cross compiler (its tool prefix and Debian packages)."""
    arch_flags: tuple[str, ...]
    """Compiler flags that select the core; the optimisation level and extra flags come per build."""
    link_flags: tuple[str, ...]
    """Flags of the final link: C library with semihosting, start files, linker script."""
    startup_sources: tuple[str, ...]
    """C files in :data:`PACKAGE_FILES` compiled into every program (empty: the C library's start files)."""
    emulator: str
    emulator_args: tuple[str, ...]
    """QEMU's arguments before ``-kernel ELF``."""
    emulator_package: str
    """The Debian package that provides :attr:`emulator`, named in skip reasons."""

    def missing(self) -> str | None:
        """Why programs cannot be built or run for this target here, or None when they can (cached: the check
        links an empty program, which proves the C library and its semihosting part are installed)."""
        return _missing(self)


@functools.cache
def _missing(target: EmulatedTarget) -> str | None:
    reason = target.cross.missing()
    if reason is not None:
        return reason
    if shutil.which(target.emulator) is None:
        return f"{target.emulator} not found (install Debian's {target.emulator_package})"
    with tempfile.TemporaryDirectory(prefix="dc_emulated_") as scratch:
        source = Path(scratch) / "empty.c"
        source.write_text("int main(void) { return 0; }\n", encoding="utf-8")
        try:
            _link([source], Path(scratch) / "empty.elf", target, compile_flags(target, "-Os", ()), [])
        except EmulatedBuildError as error:
            return (f"cannot link a program for {target.name} (install Debian's {target.cross.package}): "
                    + str(error).splitlines()[-1])
    return None


CORTEX_M4_MPS2 = EmulatedTarget(
    name="cortex-m4",
    cross=CORTEX_M4,
    arch_flags=CORTEX_M4_ARCH,
    # Our start-up code replaces newlib's (which asks QEMU, not the linker script, where stack and heap are).
    link_flags=("--specs=rdimon.specs", "-nostartfiles", "-T", str(PACKAGE_FILES / "mps2_an386.ld")),
    startup_sources=("cortex_m4_startup.c",),
    emulator="qemu-system-arm",
    emulator_args=("-M", "mps2-an386", "-nographic", "-semihosting-config", "enable=on,target=native"),
    emulator_package=DEBIAN_PACKAGES["qemu-system-arm"],
)

RV32IMC_VIRT = EmulatedTarget(
    name="rv32imc",
    cross=RV32IMC,
    arch_flags=RV32IMC_ARCH,
    # picolibc's linker script takes the memory map as symbols; they must precede the script (-T) to count.
    link_flags=("--oslib=semihost", "--crt0=semihost", "-Wl,--defsym=__flash=0x80000000",
                "-Wl,--defsym=__flash_size=0x400000", "-Wl,--defsym=__ram=0x80400000",
                "-Wl,--defsym=__ram_size=0x400000", "-Wl,--defsym=__stack_size=0x10000", "-Tpicolibc.ld"),
    startup_sources=(),
    emulator="qemu-system-riscv32",
    # picolibc writes stdout through the semihosting console, which QEMU sends to stderr unless given a chardev.
    emulator_args=("-M", "virt", "-bios", "none", "-display", "none", "-monitor", "none", "-serial", "none",
                   "-chardev", "stdio,id=dc_console", "-semihosting-config",
                   "enable=on,target=native,chardev=dc_console"),
    emulator_package=DEBIAN_PACKAGES["qemu-system-riscv32"],
)

TARGETS: tuple[EmulatedTarget, ...] = (CORTEX_M4_MPS2, RV32IMC_VIRT)


class EmulatedBuildError(Exception):
    """The library, a source or the link failed; the message carries the tool's first lines."""


@dataclass(frozen=True)
class EmulatorRun:
    """One program run under QEMU."""

    exit_code: int
    """``main``'s return value (or ``exit``'s argument); :data:`FAULT_STATUS` after a fault,
    :data:`TIMEOUT_STATUS` when the run was stopped."""
    stdout: str
    stderr: str
    """QEMU's own messages and the start-up code's fault report."""
    seconds: float
    """Wall time of the QEMU process (start-up included, a few tens of milliseconds)."""
    timed_out: bool = False

    @property
    def self_test_passed(self) -> bool:
        """The self-test's verdict: exit status 0 and its last line."""
        return self.exit_code == 0 and PASSED_LINE in self.stdout.splitlines()

    def describe(self) -> str:
        """Exit status, time and both streams, for assertion messages."""
        return (f"exit {self.exit_code}{' (timed out)' if self.timed_out else ''} after {self.seconds:.2f} s\n"
                f"stdout:\n{self.stdout}\nstderr:\n{self.stderr}")


def _environment() -> dict[str, str]:
    """Without an outer make's job server and level (``make test`` runs pytest), which the inner make would use."""
    return {name: value for name, value in os.environ.items() if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def _run_tool(command: list[str], what: str, cwd: Path | None = None) -> str:
    result = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=_environment())
    output = (result.stderr + result.stdout).strip()
    if result.returncode != 0:
        raise EmulatedBuildError(f"{what} failed (exit {result.returncode}):\n" + "\n".join(output.splitlines()[:20]))
    return output


def compile_flags(target: EmulatedTarget, optimisation: str, extra_cflags: Sequence[str]) -> list[str]:
    """The flags of every object of a program: core, optimisation level, then the caller's extras."""
    if not optimisation.startswith("-O"):
        raise ValueError(f"optimisation must be a -O flag (-O0, -O2, -Os, ...), not {optimisation!r}")
    return [*target.arch_flags, optimisation, *extra_cflags]


def _link(sources: Sequence[Path], elf: Path, target: EmulatedTarget, flags: Sequence[str], includes: Sequence[str],
          library: Path | None = None, ldflags: Sequence[str] = ()) -> None:
    """Compile the target's start-up code and ``sources`` next to ``elf`` and link them (with ``library``)."""
    objects = []
    for index, source in enumerate([*(PACKAGE_FILES / name for name in target.startup_sources), *sources]):
        obj = elf.parent / "program" / f"{index:02d}_{source.stem}.o"
        obj.parent.mkdir(exist_ok=True)
        _run_tool([target.cross.compiler, *flags, C_STANDARD, *SECTION_FLAGS, *includes, "-c", str(source), "-o",
                   str(obj)], f"{target.name} compile of {source.name}")
        objects.append(str(obj))
    libraries = [str(library)] if library is not None else []
    _run_tool([target.cross.compiler, *flags, *target.link_flags, *ldflags, "-Wl,--gc-sections", *objects, *libraries,
               "-lm", "-o", str(elf)], f"{target.name} link of {elf.name}")


def build_program(folder: Path, target: EmulatedTarget = CORTEX_M4_MPS2, *, optimisation: str = "-Os",
                  extra_cflags: Sequence[str] = (), main_sources: Sequence[Path | str] = SELF_TEST_MAINS,
                  build_dir: str | None = None, extra_ldflags: Sequence[str] = (), jobs: int = 2) -> Path:
    """Build ``folder``'s library and link ``main_sources`` with it for ``target``; return the ELF's path.

    The library comes from the folder's Makefile (``CC``, ``AR``, ``CFLAGS`` and
    ``OBJDIR`` on its command line) and is copied into the build directory, so
    the program links the objects of this level even if the folder is built
    again.  ``main_sources`` (relative to ``folder``, or absolute) and the
    target's start-up code are compiled with the same flags, against the
    folder's headers.  ``build_dir`` (relative to ``folder``) defaults to
    ``build-<target>-<level>``, e.g. ``build-cortex-m4-Os``.  ``extra_ldflags``
    go to the link only (e.g. ``-Wl,--defsym=__dc_stack_size=BYTES`` for a
    larger Cortex-M4 stack than the script's 64 KiB).  Compiler
    warnings do not fail the build (the warning-free build is
    ``cross_targets``' check); a failing tool raises :class:`EmulatedBuildError`.
    """
    flags = compile_flags(target, optimisation, extra_cflags)
    make = shutil.which("make")
    if make is None:
        raise EmulatedBuildError("make not found")
    if not (folder / "Makefile").is_file():
        raise EmulatedBuildError(f"{folder} has no Makefile: write it with compile -o (GeneratedNetwork.write)")
    build = folder / (build_dir or f"build-{target.name}{optimisation}")
    build.mkdir(parents=True, exist_ok=True)
    (folder / LIBRARY).unlink(missing_ok=True)
    _run_tool([make, "-s", "--no-print-directory", "-C", str(folder), f"-j{jobs}", f"CC={target.cross.compiler}",
               f"AR={target.cross.archiver}", f"CFLAGS={' '.join(flags)}", f"OBJDIR={build.relative_to(folder)}",
               LIBRARY], f"{target.name} build of {folder.name}/{LIBRARY}")
    library = build / LIBRARY
    shutil.copyfile(folder / LIBRARY, library)
    sources = [source if Path(source).is_absolute() else folder / source for source in map(Path, main_sources)]
    elf = build / "program.elf"
    _link(sources, elf, target, flags, [f"-I{folder}", f"-I{folder / 'runtime' / 'include'}"], library, extra_ldflags)
    return elf


def run_program(elf: Path, target: EmulatedTarget = CORTEX_M4_MPS2, timeout: float = 120.0) -> EmulatorRun:
    """Run ``elf`` under QEMU until it exits (or ``timeout`` seconds pass) and collect what it printed.

    Standard input is empty: a program that reads gets end of file.  QEMU's
    output goes to temporary files, not pipes: QEMU writes its stdio without
    blocking and drops what a full pipe does not take, so a program printing
    more than a pipe holds (64 KiB) lost output whenever the reader was slow
    (seen on a loaded machine with the build matrix's hex dumps).
    """
    command = [target.emulator, *target.emulator_args, "-kernel", str(elf)]
    start = time.monotonic()
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        try:
            result = subprocess.run(command, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, timeout=timeout)
            exit_code, timed_out = result.returncode, False
        except subprocess.TimeoutExpired:
            exit_code, timed_out = TIMEOUT_STATUS, True
        seconds = time.monotonic() - start
        stdout.seek(0)
        stderr.seek(0)
        return EmulatorRun(exit_code, _text(stdout.read()), _text(stderr.read()), seconds, timed_out=timed_out)


def _text(stream: bytes | str | None) -> str:
    if stream is None:
        return ""
    return stream.decode("utf-8", errors="replace") if isinstance(stream, bytes) else stream


def run_self_test(folder: Path, target: EmulatedTarget = CORTEX_M4_MPS2, *, optimisation: str = "-Os",
                  extra_cflags: Sequence[str] = (), timeout: float = 120.0, jobs: int = 2) -> EmulatorRun:
    """Build the self-test ``compile --inputs`` wrote into ``folder`` for ``target`` and run it."""
    missing = [name for name in SELF_TEST_MAINS if not (folder / name).is_file()]
    if missing:
        raise EmulatedBuildError(f"{folder} has no self-test ({', '.join(missing)}): compile with --inputs")
    elf = build_program(folder, target, optimisation=optimisation, extra_cflags=extra_cflags, jobs=jobs)
    return run_program(elf, target, timeout)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m deeploy_core.testing.emulated_targets FOLDER [-Os] [--target rv32imc]``: run FOLDER's
    self-test on the emulated core; prints what the program printed and exits with its status."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m deeploy_core.testing.emulated_targets",
                                     description="Build an output folder's self-test for an emulated core and "
                                                 "run it under QEMU.")
    parser.add_argument("folder", type=Path, help="an output folder written by compile --inputs")
    parser.add_argument("-O", dest="level", default="s", help="optimisation level: 0, 1, 2, 3, s (default), ...")
    parser.add_argument("--target", choices=[target.name for target in TARGETS], default=CORTEX_M4_MPS2.name)
    parser.add_argument("--cflags", default="", help="extra compiler flags, split at spaces")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before QEMU is stopped")
    args = parser.parse_args(argv)
    [target] = [target for target in TARGETS if target.name == args.target]
    missing = target.missing()
    if missing is not None:
        print(f"error: {missing}", file=sys.stderr)
        return 2
    try:
        run = run_self_test(args.folder, target, optimisation=f"-O{args.level}", extra_cflags=args.cflags.split(),
                            timeout=args.timeout)
    except EmulatedBuildError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(run.stdout)
    sys.stderr.write(run.stderr)
    stopped = " (timed out)" if run.timed_out else ""
    print(f"{target.name} -O{args.level} on {target.emulator}: exit {run.exit_code}{stopped}", file=sys.stderr)
    return run.exit_code


if __name__ == "__main__":
    raise SystemExit(main())
