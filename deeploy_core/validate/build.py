"""Building generated code with the system C compiler (never through a shell)."""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.platform import RuntimeLibrary
from deeploy_core.validate.harness import HARNESS_NAME, HARNESS_SOURCE


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


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise BuildError(f"{what} failed (exit {result.returncode})", details=tuple(lines[:20]))


def runtime_objects(runtime: RuntimeLibrary, toolchain: Toolchain, cache_dir: Path) -> list[Path]:
    """The runtime compiled to object files, cached by the hash of sources, headers and flags.

    Objects rather than a static archive: kernels call each other, and a
    single pass over an archive would depend on member order.
    """
    digest = hashlib.sha256()
    for part in (*toolchain.compiler, *toolchain.extra_flags, *runtime.cflags):
        digest.update(part.encode() + b"\0")
    for source in sorted(runtime.sources):
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
        for header in sorted(source.parent.glob("*.h")):
            digest.update(header.read_bytes())
    for include in runtime.include_dirs:
        for header in sorted(include.glob("*.h")):
            digest.update(header.read_bytes())
    target = cache_dir / f"runtime-{digest.hexdigest()[:16]}"
    objects = [target / f"{index:03d}_{source.stem}.o" for index, source in enumerate(sorted(runtime.sources))]
    if target.is_dir() and all(obj.exists() for obj in objects):
        return objects
    build = cache_dir / f"build-{os.getpid()}-{digest.hexdigest()[:8]}"
    build.mkdir(parents=True, exist_ok=True)
    for source, obj in zip(sorted(runtime.sources), objects):
        command = [*toolchain.compiler, *runtime.cflags, *toolchain.extra_flags]
        command += [f"-I{path}" for path in runtime.include_dirs] + ["-c", str(source), "-o", str(build / obj.name)]
        _run(command, f"compiling runtime {source.name}")
    try:
        os.replace(build, target)
    except OSError:  # another process finished first: use its objects
        shutil.rmtree(build, ignore_errors=True)
    return objects


def build_executable(
    generated: GeneratedNetwork, directory: Path, toolchain: Toolchain, cache_dir: Path | None = None
) -> Path:
    """Write the generated files and the harness into ``directory`` and link the test program."""
    generated.write(directory)
    (directory / HARNESS_NAME).write_text(HARNESS_SOURCE, encoding="utf-8")
    runtime = generated.runtime
    sources = [directory / name for name in sorted(generated.files) if name.endswith(".c")] + [directory / HARNESS_NAME]
    command = [*toolchain.compiler, *runtime.cflags, *toolchain.extra_flags, f"-I{directory}"]
    command += [f"-I{path}" for path in runtime.include_dirs] + [str(path) for path in sources]
    if cache_dir is not None:
        command += [str(obj) for obj in runtime_objects(runtime, toolchain, cache_dir)]
    else:
        command += [str(path) for path in sorted(runtime.sources)]
    executable = directory / "network"
    command += ["-o", str(executable), *runtime.ldflags]
    _run(command, "building the generated network")
    return executable
