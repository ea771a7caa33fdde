"""The C runtime library a platform ships: the files and flags a build of the generated code needs.

A platform declares its library, and the kernels a network uses add their own
files to it (:func:`deeploy_core.platform.network_runtime`).  It is plain data
in a module that imports only other plain data, so that whatever names it
(the platform model, the network's runtime, the build) does not pull in the
platform's engines and mappers.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deeploy_core.platform.board import BoardSupport
from deeploy_core.mapping.external_library import ExternalLibrary


@dataclass(frozen=True)
class RuntimeLibrary:
    """The platform's C kernels: what a build of the generated code needs."""

    include_dirs: tuple[Path, ...] = ()
    sources: tuple[Path, ...] = ()
    cflags: tuple[str, ...] = ("-std=c99", "-O2")
    ldflags: tuple[str, ...] = ("-lm",)
    host_sources: tuple[Path, ...] = ()
    """Those of ``sources`` that stand in for the hardware on a host run (an emulated HAL): shipped in the
    output folder and linked into host test programs, but never part of the network library a firmware
    links, where the chip's SDK provides the same functions."""
    external: tuple[ExternalLibrary, ...] = ()
    """Files of libraries the user provides (CMSIS-NN), built from where the user keeps them, never copied."""
    board: BoardSupport | None = None
    """The board the folder's self-test runs on (cross compiler, start-up, emulator); None: the host."""
