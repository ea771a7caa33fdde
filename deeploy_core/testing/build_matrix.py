"""A differential build matrix: one generated folder built by several compilers at several optimisation levels.

Issue 29 was a network whose generated C gave wrong answers at gcc 12 ``-O2``
only (identical-code folding plus a gcc bug deleted a layer's calls), while
the same folder was right at ``-O0``/``-O1`` and with clang.  A validation at
one (compiler, flags) pair cannot see that class of bug; comparing the raw
outputs of many builds of the same folder can: every build must compute what
the host ``gcc -O0`` build computes (:data:`BASELINE`), integers bit for bit
and floats within :data:`~deeploy_core.testing.output_equality.FLOAT_RELATIVE`
(see :mod:`~deeploy_core.testing.output_equality`), and the golden outputs.

Each build gets a mirror of the folder (hard links to its sources), so builds
of one folder can run side by side: the folder's Makefile always writes
``libnetwork.a`` into the folder itself.  The library is built with that
Makefile, as a user would (``make CC=... CFLAGS=... OBJDIR=...``); the main is
:mod:`~deeploy_core.testing.output_dump`'s, which prints the outputs' bytes.
Host builds link with the Makefile's ``program`` target and run directly;
microcontroller builds link and run in QEMU through
:mod:`deeploy_core.testing.emulated_targets` (semihosting carries ``stdout``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.codegen.api_names import DEFAULT_API, NetworkApi
from deeploy_core.ir.tensor_spec import TensorSpec
from deeploy_core.testing.cross_targets import CORTEX_M4, RV32IMC
from deeploy_core.testing.emulated_targets import TARGETS as EMULATED_TARGETS
from deeploy_core.testing.emulated_targets import EmulatedBuildError, build_program, run_program
from deeploy_core.testing.output_dump import MAIN_NAME, DumpError, dump_main_source, parse_dump
from deeploy_core.testing.output_equality import Golden, build_differences, golden_differences
from deeploy_core.validate.build import make_environment

HOST = "host"
PROGRAM = "dc_matrix"
"""The host program the Makefile's ``program`` target links in a build's mirror folder."""


@dataclass(frozen=True)
class Compiler:
    """A C compiler for one target: the host's (``emulated`` None), or a cross compiler whose programs run in QEMU
    (``emulated`` names the :mod:`~deeploy_core.testing.emulated_targets` target, which knows its flags)."""

    name: str
    target: str
    command: str
    archiver: str
    emulated: str | None = None
    package: str = ""
    """The Debian package(s) that provide it, named when it is missing."""

    def missing(self) -> str | None:
        """Why this compiler cannot build here (None: it can; an emulated target also checks QEMU and the C
        library when it builds)."""
        for tool in (self.command, self.archiver):
            if shutil.which(tool) is None:
                return f"{tool} not found" + (f" (install Debian's {self.package})" if self.package else "")
        return None


GCC = Compiler("gcc", HOST, "gcc", "ar", package="gcc")
CLANG = Compiler("clang", HOST, "clang", "ar", package="clang")
ARM_GCC = Compiler("arm-none-eabi-gcc", CORTEX_M4.name, CORTEX_M4.compiler, CORTEX_M4.archiver, CORTEX_M4.name,
                   CORTEX_M4.package)
RISCV_GCC = Compiler("riscv64-unknown-elf-gcc", RV32IMC.name, RV32IMC.compiler, RV32IMC.archiver, RV32IMC.name,
                     RV32IMC.package)

NO_STRICT_ALIASING = ("-fno-strict-aliasing",)
"""The one extra flag the matrix varies: code that breaks the aliasing rules changes with it."""


@dataclass(frozen=True)
class BuildConfig:
    """One cell's build: a compiler, an optimisation level and extra flags."""

    compiler: Compiler
    level: str
    extra: tuple[str, ...] = ()

    @property
    def cflags(self) -> tuple[str, ...]:
        """``CFLAGS`` of a host build for the folder's Makefile (the include paths and ``-std`` stay in its own
        variables; an emulated build adds the core's flags in front)."""
        return (self.level, *self.extra)

    @property
    def flags(self) -> str:
        """The level and extra flags as a table shows them (``-O2 -fno-strict-aliasing``)."""
        return " ".join((self.level, *self.extra))

    @property
    def label(self) -> str:
        """``gcc -O2 -fno-strict-aliasing (host)``."""
        return f"{self.compiler.name} {self.flags} ({self.compiler.target})"

    @property
    def slug(self) -> str:
        """A file-name-safe id: ``gcc-O2-fno-strict-aliasing-host``."""
        parts = [self.compiler.name, self.level.lstrip("-"), *(flag.lstrip("-") for flag in self.extra),
                 self.compiler.target]
        return "-".join(part.replace("=", "_").replace("/", "_") for part in parts)


BASELINE = BuildConfig(GCC, "-O0")
"""Every other build is compared with this one: the host's gcc without optimisation."""


def _levels(compiler: Compiler, levels: Sequence[str]) -> list[BuildConfig]:
    return [BuildConfig(compiler, level, extra) for level in levels for extra in ((), NO_STRICT_ALIASING)]


FULL_MATRIX: tuple[BuildConfig, ...] = (
    *_levels(GCC, ("-O0", "-O1", "-O2", "-O3", "-Os")),
    *_levels(CLANG, ("-O0", "-O2", "-O3", "-Oz")),
    *_levels(ARM_GCC, ("-Os", "-O2")),
    *_levels(RISCV_GCC, ("-Os", "-O2")),
)
"""Every build the matrix knows, each level with and without ``-fno-strict-aliasing``; the baseline first."""

IDENTICAL = "identical"
DIFFERS = "differs"
BUILD_FAILED = "build failed"
RUN_FAILED = "run failed"
UNAVAILABLE = "unavailable"
STATUSES = (IDENTICAL, DIFFERS, BUILD_FAILED, RUN_FAILED, UNAVAILABLE)
"""A cell's verdict, best first: ``unavailable`` means the compiler or emulator is not installed here."""


@dataclass(frozen=True)
class BuildRun:
    """What one build produced: the outputs' bytes, or why there are none (``status`` is one of
    :data:`BUILD_FAILED`, :data:`RUN_FAILED`, :data:`UNAVAILABLE` then)."""

    config: BuildConfig
    outputs: tuple[bytes, ...] | None
    status: str = ""
    detail: str = ""
    seconds: float = 0.0

    @property
    def ran(self) -> bool:
        return self.outputs is not None


EmulatedRun = Callable[[Path, Path, BuildConfig, float], str]
"""How a microcontroller build is made and run: (mirror folder, the main's source, the build, timeout in seconds)
→ the program's stdout; raises :class:`BuildFailed`, :class:`RunFailed` or :class:`Unavailable`."""


class BuildFailed(Exception):
    """The compiler or linker refused (the message holds its first lines)."""


class RunFailed(Exception):
    """The program crashed, timed out or exited non-zero."""


class Unavailable(Exception):
    """A tool the build needs is not installed."""


def mirror_folder(folder: Path, destination: Path) -> Path:
    """``destination`` holding ``folder``'s sources (hard links where possible) and none of its build products.

    Make only ever writes new files (objects under ``OBJDIR``, the archive
    after ``rm -f``, the program), so the links are never written through.
    """
    products = {"libnetwork.a", "network_selftest", "cmake-build"}

    def ignore(directory: str, names: list[str]) -> list[str]:
        return [name for name in names if name in products or (Path(directory) == folder and name.startswith("build"))]

    def link(source: str, target: str) -> str:
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)
        return target

    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(folder, destination, ignore=ignore, copy_function=link)
    return destination


def _make(work: Path, config: BuildConfig, targets: Sequence[str], extra: Sequence[str] = ()) -> None:
    command = ["make", "-s", "--no-print-directory", "-C", str(work), f"CC={config.compiler.command}",
               f"AR={config.compiler.archiver}", f"CFLAGS={shlex.join(config.cflags)}", f"OBJDIR=build-{config.slug}",
               *extra, *targets]
    result = subprocess.run(command, capture_output=True, text=True, env=make_environment())
    if result.returncode != 0:
        lines = (result.stderr + result.stdout).strip().splitlines()
        raise BuildFailed(f"make {' '.join(targets)} (exit {result.returncode}): " + " | ".join(lines[:12]))


def build_host_program(work: Path, config: BuildConfig) -> Path:
    """Link the dump main with ``work``'s library by the Makefile's ``program`` target; returns the program."""
    _make(work, config, ["program"], [f"PROGRAM={PROGRAM}", f"PROGRAM_SRCS={MAIN_NAME}"])
    return work / PROGRAM


def _run_host(program: Path, timeout: float) -> str:
    try:
        result = subprocess.run([str(program)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as error:
        raise RunFailed(f"no result after {timeout:g} s") from error
    if result.returncode != 0:
        raise RunFailed(f"exit {result.returncode}: {result.stderr.strip()[:300]}")
    return result.stdout


def build_and_run(folder: Path, config: BuildConfig, inputs: Sequence[bytes], workdir: Path,
                  api: NetworkApi = DEFAULT_API, emulated: EmulatedRun | None = None,
                  timeout: float = 600.0) -> BuildRun:
    """Build ``folder`` with ``config`` in a mirror under ``workdir``, run it on ``inputs`` (bytes per network
    input, in order) and return the outputs' bytes, or the reason there are none.

    ``emulated`` builds and runs a microcontroller build (None: :func:`run_emulated`).
    """
    started = time.perf_counter()

    def finished(outputs: tuple[bytes, ...] | None, status: str = "", detail: str = "") -> BuildRun:
        return BuildRun(config, outputs, status, detail, time.perf_counter() - started)

    missing = config.compiler.missing()
    if missing is not None:
        return finished(None, UNAVAILABLE, missing)
    work = mirror_folder(folder, workdir / config.slug)
    main = work / MAIN_NAME
    main.write_text(dump_main_source(inputs, api), encoding="utf-8")
    try:
        if config.compiler.emulated is None:
            printed = _run_host(build_host_program(work, config), timeout)
        else:
            printed = (emulated or run_emulated)(work, main, config, timeout)
        return finished(tuple(parse_dump(printed)))
    except Unavailable as error:
        return finished(None, UNAVAILABLE, str(error))
    except BuildFailed as error:
        return finished(None, BUILD_FAILED, str(error))
    except (RunFailed, DumpError) as error:
        return finished(None, RUN_FAILED, str(error))


def run_emulated(work: Path, main: Path, config: BuildConfig, timeout: float) -> str:
    """Build ``work``'s library and ``main`` for the config's emulated core and run it in QEMU; its stdout.

    :mod:`~deeploy_core.testing.emulated_targets` owns everything target specific (core flags, start-up code,
    linker script, semihosting, QEMU's command line); this only maps its outcomes onto the matrix's verdicts.
    """
    target = next(candidate for candidate in EMULATED_TARGETS if candidate.name == config.compiler.emulated)
    missing = target.missing()
    if missing is not None:
        raise Unavailable(missing)
    try:
        elf = build_program(work, target, optimisation=config.level, extra_cflags=config.extra, main_sources=[main],
                            build_dir=f"build-{config.slug}", jobs=1)
    except EmulatedBuildError as error:
        raise BuildFailed(" | ".join(str(error).splitlines()[:12])) from error
    run = run_program(elf, target, timeout)
    if run.timed_out:
        raise RunFailed(f"no result after {timeout:g} s in {target.emulator}")
    if run.exit_code != 0:
        raise RunFailed(f"exit {run.exit_code} in {target.emulator}: {(run.stderr or run.stdout).strip()[-300:]}")
    return run.stdout


def run_builds(folder: Path, configs: Sequence[BuildConfig], inputs: Sequence[bytes], workdir: Path,
               api: NetworkApi = DEFAULT_API, jobs: int = 2, emulated: EmulatedRun | None = None,
               timeout: float = 600.0) -> dict[BuildConfig, BuildRun]:
    """:func:`build_and_run` for every config (``jobs`` at a time; each make runs one compiler at a time), in
    the order of ``configs``."""
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(build_and_run, folder, config, inputs, workdir, api, emulated, timeout)
                   for config in configs]
        return {config: future.result() for config, future in zip(configs, futures)}


@dataclass(frozen=True)
class Cell:
    """One build's verdict: identical with the baseline and the goldens, or what went wrong."""

    config: BuildConfig
    status: str
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == IDENTICAL


def judge(run: BuildRun, baseline: BuildRun | None, specs: Sequence[TensorSpec], golden: Golden | None) -> Cell:
    """The verdict on ``run``: its outputs against the baseline build's (when that ran) and the goldens."""
    if run.outputs is None:
        return Cell(run.config, run.status, run.detail, run.seconds)
    try:
        problems = []
        if baseline is not None and baseline.outputs is not None and baseline.config != run.config:
            problems += [f"vs {baseline.config.label}: {line}"
                         for line in build_differences(run.outputs, baseline.outputs, specs)]
        if golden is not None:
            problems += [f"vs golden: {line}" for line in golden_differences(run.outputs, specs, golden)]
    except ValueError as error:  # the printout does not fit the declared outputs
        return Cell(run.config, RUN_FAILED, str(error), run.seconds)
    if problems:
        return Cell(run.config, DIFFERS, "; ".join(problems), run.seconds)
    return Cell(run.config, IDENTICAL, "", run.seconds)


def judge_all(runs: dict[BuildConfig, BuildRun], specs: Sequence[TensorSpec], golden: Golden | None,
              baseline: BuildConfig = BASELINE) -> list[Cell]:
    """:func:`judge` for every run, against the run of ``baseline`` (which is only checked against the goldens)."""
    reference = runs.get(baseline)
    return [judge(run, reference, specs, golden) for run in runs.values()]
