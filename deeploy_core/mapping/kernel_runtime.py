"""The C files a kernel needs beyond its platform's runtime library.

A platform ships one runtime library for its own kernels.  An operator added by
a plugin brings its kernel as C files of its own; they travel with the mapper
(not with the platform) so that the network's runtime is the platform's plus
exactly the files of the kernels the network uses — a network without the
plugin's op is built as if the plugin were not installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the platform model imports this package: only its type is needed here
    from deeploy_core.mapping.layer import Layer
    from deeploy_core.platform.model import RuntimeLibrary


@dataclass(frozen=True)
class KernelRuntime:
    """C sources to compile and header folders to add to the include path for one kernel."""

    sources: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.sources or self.include_dirs)


def network_runtime(platform_runtime: RuntimeLibrary, layers: Iterable[Layer]) -> RuntimeLibrary:
    """``platform_runtime`` plus the kernel runtimes of the mappers ``layers`` use, each file once.

    The platform's own folders and sources come first and keep their order;
    the added ones follow in sorted order, so the result does not depend on
    the order of layers or of plugin loading.
    """
    sources: set[Path] = set()
    include_dirs: set[Path] = set()
    for layer in layers:
        runtime = layer.mapper.runtime
        if runtime is not None:
            sources.update(runtime.sources)
            include_dirs.update(runtime.include_dirs)
    added_sources = tuple(sorted(sources - set(platform_runtime.sources)))
    added_dirs = tuple(sorted(include_dirs - set(platform_runtime.include_dirs)))
    if not added_sources and not added_dirs:
        return platform_runtime
    return replace(platform_runtime, sources=platform_runtime.sources + added_sources,
                   include_dirs=platform_runtime.include_dirs + added_dirs)
