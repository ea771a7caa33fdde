"""Building generated code with the system C compiler (never through a shell).

``validate`` builds with the output folder's own Makefile (``make program``),
so the build every validation exercises is the one a user receives; only the
runtime kernels come precompiled from a cache (the Makefile takes them as
``RUNTIME_OBJS``/``HOST_OBJS``), since hundreds of validations share them.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.codegen.build_files import SECTION_FLAGS
from deeploy_core.codegen.output_folder import build_flags
from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.platform import RuntimeLibrary
from deeploy_core.validate.harness import HARNESS_NAME, harness_source

PROGRAM_NAME = "network"
"""The validation program ``make program`` links in the output folder."""


class BuildError(DeeployError):
    """The C compiler rejected generated code (a compiler bug, reported with the compiler's first lines)."""


@dataclass(frozen=True)
class Toolchain:
    """The C compiler command and extra flags (``CC`` and ``CFLAGS`` from the environment by default)."""

    compiler: tuple[str, ...]
    extra_flags: tuple[str, ...] = ()

    @classmethod
    def from_environment(cls, extra_flags: tuple[str, ...] = ()) -> Toolchain:
        compiler = tuple(shlex.split(os.environ.get("CC", "cc")))
        if not compiler or shutil.which(compiler[0]) is None:
            raise DeeployError(f"C compiler {compiler[0] if compiler else '(empty CC)'!r} not found; set CC")
        return cls(compiler, tuple(shlex.split(os.environ.get("CFLAGS", ""))) + extra_flags)


def _run(command: list[str], what: str, environment: dict[str, str] | None = None) -> None:
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise BuildError(f"{what} failed (exit {result.returncode})", details=tuple(lines[:20]))


def runtime_objects(runtime: RuntimeLibrary, toolchain: Toolchain, cache_dir: Path) -> dict[Path, Path]:
    """The runtime compiled to object files (source → object), cached by the hash of sources, headers and flags.

    Objects rather than a static archive: kernels call each other, and a
    single pass over an archive would depend on member order.
    """
    digest = hashlib.sha256()
    for part in (*toolchain.compiler, *toolchain.extra_flags, *runtime.cflags, *SECTION_FLAGS):
        digest.update(part.encode() + b"\0")
    for source in sorted(runtime.sources):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
        for header in sorted(source.parent.glob("*.h")):
            digest.update(header.read_bytes())
    for include in runtime.include_dirs:
        for header in sorted(include.glob("*.h")):
            digest.update(header.read_bytes())
    target = cache_dir / f"runtime-{digest.hexdigest()[:16]}"
    objects = {source: target / f"{index:03d}_{source.stem}.o" for index, source in enumerate(sorted(runtime.sources))}
    if target.is_dir() and all(obj.exists() for obj in objects.values()):
        return objects
    build = cache_dir / f"build-{os.getpid()}-{digest.hexdigest()[:8]}"
    build.mkdir(parents=True, exist_ok=True)
    for source, obj in objects.items():
        # The same per-function sections as the folder's Makefile gives its own objects.
        command = [*toolchain.compiler, *runtime.cflags, *SECTION_FLAGS, *toolchain.extra_flags]
        command += [f"-I{path}" for path in runtime.include_dirs] + ["-c", str(source), "-o", str(build / obj.name)]
        _run(command, f"compiling runtime {source.name}")
    try:
        os.replace(build, target)
    except OSError:  # another process finished first: use its objects
        shutil.rmtree(build, ignore_errors=True)
    return objects


def make_environment(*dropped: str) -> dict[str, str]:
    """The environment without an outer make's job-server and level variables (``make test`` runs pytest), nor
    the variables named in ``dropped``."""
    left_out = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", *dropped)
    return {name: value for name, value in os.environ.items() if name not in left_out}


def build_executable(
    generated: GeneratedNetwork, directory: Path, toolchain: Toolchain, cache_dir: Path | None = None
) -> Path:
    """Write the output folder and the harness into ``directory`` and link the test program with its Makefile.

    ``CFLAGS`` holds the platform's optimisation and warning flags (generated
    code must compile without a warning) and the toolchain's extra flags;
    with ``cache_dir`` the runtime kernels are linked from the object cache.
    """
    if shutil.which("make") is None:
        raise DeeployError("'make' not found: validate builds the output folder with its Makefile; install make")
    generated.write(directory)
    (directory / HARNESS_NAME).write_text(harness_source(generated.api), encoding="utf-8")
    flags = build_flags(generated.runtime)
    command = [
        "make", "-s", "-C", str(directory), "program", f"PROGRAM={PROGRAM_NAME}", f"PROGRAM_SRCS={HARNESS_NAME}",
        f"CC={shlex.join(toolchain.compiler)}",
        f"CFLAGS={shlex.join([*flags.optimisation, *flags.warnings, *toolchain.extra_flags])}",
    ]
    if cache_dir is not None:
        objects = runtime_objects(generated.runtime, toolchain, cache_dir)
        placed = generated.placed_runtime
        command += [f"RUNTIME_OBJS={shlex.join(str(objects[path]) for path in placed.library_sources.values())}",
                    f"HOST_OBJS={shlex.join(str(objects[path]) for path in placed.host_sources.values())}"]
    _run(command, "building the generated network", make_environment())
    return directory / PROGRAM_NAME
