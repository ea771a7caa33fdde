"""Bare-metal targets the generated library is cross-compiled for, and the one way to build it for them.

The output folder is meant to be dropped into firmware, so the test suite and
``bench/cross_size.py`` hold it to a real microcontroller build: Debian's
``gcc-arm-none-eabi`` for a Cortex-M4 with its single-precision FPU, and,
where Debian's ``gcc-riscv64-unknown-elf`` with picolibc is installed, an
rv32imc core (no FPU: float kernels become soft-float calls).  Both build
the library only (no ``main``, no link), with warnings as errors: on these
targets ``int32_t`` is ``long`` and ``double`` is not free, so code that is
clean on the host can still warn here.

Both users build the folder the way a firmware engineer would (``make -C
OUT CC=... CFLAGS=...``) and read its section sizes from the archive, so the
figures in the docs are those of the build the tests check.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.platform.tool_packages import DEBIAN_PACKAGES

LIBRARY = "libnetwork.a"
"""The static library the output folder's Makefile builds (target ``all``)."""


@dataclass(frozen=True)
class CrossTarget:
    """One bare-metal core: the GNU tools that build for it and the flags that select it."""

    name: str
    tool_prefix: str
    cflags: tuple[str, ...]
    package: str
    """The Debian package(s) that provide the tools, named in skip reasons."""

    @property
    def compiler(self) -> str:
        return f"{self.tool_prefix}gcc"

    @property
    def archiver(self) -> str:
        return f"{self.tool_prefix}ar"

    @property
    def size_tool(self) -> str:
        return f"{self.tool_prefix}size"

    def missing(self) -> str | None:
        """Why this target cannot be built on this machine, or None when it can."""
        for tool in (self.compiler, self.archiver, self.size_tool):
            if shutil.which(tool) is None:
                return f"{tool} not found (install Debian's {self.package})"
        for flag in self.cflags:
            if flag.startswith("--specs="):
                specs = flag.removeprefix("--specs=")
                found = subprocess.run([self.compiler, f"-print-file-name={specs}"], capture_output=True, text=True)
                if not Path(found.stdout.strip()).is_absolute():
                    return f"{specs} not found for {self.compiler} (install Debian's {self.package})"
        return None


WARNINGS: tuple[str, ...] = ("-Wall", "-Wextra", "-Werror")
"""The issue's warning set for the firmware build: any warning fails it."""

CORTEX_M4_ARCH: tuple[str, ...] = ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")
"""The flags that select the Cortex-M4 and its FPU (shared with the emulated runs of emulated_targets.py)."""

CORTEX_M4 = CrossTarget(
    name="cortex-m4",
    tool_prefix="arm-none-eabi-",
    cflags=(*CORTEX_M4_ARCH, "-Os", *WARNINGS),
    package=DEBIAN_PACKAGES["arm-none-eabi-gcc"],
)

RV32IMC_ARCH: tuple[str, ...] = ("-march=rv32imc", "-mabi=ilp32", "--specs=picolibc.specs")
"""The flags that select rv32imc; picolibc supplies the C headers (stdint.h, math.h): Debian's
riscv64-unknown-elf gcc has no libc of its own."""

RV32IMC = CrossTarget(
    name="rv32imc",
    tool_prefix="riscv64-unknown-elf-",
    cflags=(*RV32IMC_ARCH, "-Os", *WARNINGS),
    package=DEBIAN_PACKAGES["riscv64-unknown-elf-gcc"],
)

TARGETS: tuple[CrossTarget, ...] = (CORTEX_M4, RV32IMC)


class CrossBuildError(Exception):
    """``make`` failed for a target; the message carries the compiler's first lines (warnings are errors)."""


def build_library(folder: Path, target: CrossTarget, jobs: int = 2, build_dir: str | None = None) -> Path:
    """Build ``folder``'s static library for ``target`` with its own Makefile; return the archive's path.

    ``CC``, ``AR`` and ``CFLAGS`` are given on the command line exactly as a
    user would; the include paths survive because the Makefile keeps them in
    ``CPPFLAGS``.  ``build_dir`` (relative to ``folder``) keeps the objects of
    several targets apart; the archive is always ``folder/libnetwork.a``, so
    callers measure it before building the next target.  Any compiler output
    (a warning that ``-Werror`` did not turn into an error, e.g. from the
    archiver) is an error too: the build must be silent.
    """
    make = shutil.which("make")
    if make is None:
        raise CrossBuildError("make not found")
    command = [make, "-s", "--no-print-directory", "-C", str(folder), f"-j{jobs}", f"CC={target.compiler}", f"AR={target.archiver}",
               f"CFLAGS={' '.join(target.cflags)}"]
    if build_dir is not None:
        command.append(f"OBJDIR={build_dir}")
    (folder / LIBRARY).unlink(missing_ok=True)
    if not (folder / "Makefile").is_file():
        raise CrossBuildError(f"{folder} has no Makefile: write it with compile -o (GeneratedNetwork.write)")
    result = subprocess.run([*command, LIBRARY], capture_output=True, text=True)
    output = (result.stderr + result.stdout).strip()
    if result.returncode != 0 or output:
        lines = output.splitlines()[:20]
        raise CrossBuildError(f"{target.name} build of {folder.name} failed (exit {result.returncode}):\n"
                              + "\n".join(lines))
    return folder / LIBRARY
