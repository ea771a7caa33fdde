"""The C runtime a network is built with: its platform's library plus the files of the kernels it uses.

A kernel's own C files (:class:`~deeploy_core.mapping.kernel_runtime.KernelRuntime`)
reach the build only through the layers that use the kernel, so a network
without an operator plugin's op is built exactly as if the plugin were not
installed.  It belongs to the platform side: platforms depend on the mapping
(their engines hold mappers), never the other way round, so the kernel runtime
in :mod:`deeploy_core.mapping` names no platform type and this function, which
needs both the layers and the platform's library, lives here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from deeploy_core.mapping.external_library import ExternalLibrary, merge_external
from deeploy_core.mapping.layer import Layer
from deeploy_core.platform.runtime_library import RuntimeLibrary


def network_runtime(platform_runtime: RuntimeLibrary, layers: Iterable[Layer]) -> RuntimeLibrary:
    """``platform_runtime`` plus the kernel runtimes of the mappers ``layers`` use, each file once.

    The platform's own folders and sources come first and keep their order;
    the added ones follow in sorted order, so the result does not depend on
    the order of layers or of plugin loading.
    """
    sources: set[Path] = set()
    include_dirs: set[Path] = set()
    external: list[ExternalLibrary] = []
    for layer in layers:
        runtime = layer.mapper.runtime
        if runtime is not None:
            sources.update(runtime.sources)
            include_dirs.update(runtime.include_dirs)
            external.extend(runtime.external)
    added_sources = tuple(sorted(sources - set(platform_runtime.sources)))
    added_dirs = tuple(sorted(include_dirs - set(platform_runtime.include_dirs)))
    if not added_sources and not added_dirs and not external:
        return platform_runtime
    return replace(platform_runtime, sources=platform_runtime.sources + added_sources,
                   include_dirs=platform_runtime.include_dirs + added_dirs,
                   external=merge_external((*platform_runtime.external, *external)))
