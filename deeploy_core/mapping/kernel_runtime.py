"""The C files a kernel needs beyond its platform's runtime library.

A platform ships one runtime library for its own kernels.  An operator added by
a plugin brings its kernel as C files of its own; they travel with the mapper
(not with the platform) so that the network's runtime is the platform's plus
exactly the files of the kernels the network uses — a network without the
plugin's op is built as if the plugin were not installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deeploy_core.mapping.external_library import ExternalLibrary


@dataclass(frozen=True)
class KernelRuntime:
    """C sources to compile and header folders to add to the include path for one kernel."""

    sources: tuple[Path, ...] = ()
    include_dirs: tuple[Path, ...] = ()
    external: tuple[ExternalLibrary, ...] = ()
    """Files of user-provided libraries the kernel calls (CMSIS-NN's), built from where the user keeps them."""

    def __bool__(self) -> bool:
        return bool(self.sources or self.include_dirs or self.external)

