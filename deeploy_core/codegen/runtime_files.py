"""The runtime files copied into an output folder, and where each one goes.

The output folder must build on its own, so the runtime is copied, not
referenced: ``runtime/src`` holds the kernel sources the network calls (see
:mod:`deeploy_core.codegen.used_sources`), ``runtime/include`` the headers
they and the generated code include.  Sources that only emulate the hardware
on a host (:attr:`RuntimeLibrary.host_sources`) and the headers only they
include go to ``runtime/host``, so a firmware build can leave that folder
out and the network library never depends on a host-only header.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from deeploy_core.codegen.network_files import WEIGHT_FILES
from deeploy_core.codegen.used_sources import header_closure, used_sources
from deeploy_core.mapping.external_library import ExternalLibrary
from deeploy_core.platform.board import BoardSupport
from deeploy_core.platform.runtime_library import RuntimeLibrary

LIBRARY_SOURCES = "runtime/src"
LIBRARY_HEADERS = "runtime/include"
HOST_FILES = "runtime/host"
BOARD_FILES = "board"
"""The start-up code and linker script of the board the self-test runs on (a firmware brings its own)."""


@dataclass(frozen=True)
class RuntimeFiles:
    """Relative path in the output folder → the runtime file copied there."""

    library_sources: dict[str, Path]
    headers: dict[str, Path]
    host_sources: dict[str, Path]
    host_headers: dict[str, Path]
    external: tuple[ExternalLibrary, ...] = ()
    """User-provided libraries the build compiles from where the user keeps them (nothing of them is copied)."""
    board: BoardSupport | None = None
    board_files: dict[str, Path] = field(default_factory=dict)
    """The board's start-up sources and linker script, by relative path under :data:`BOARD_FILES`."""

    def copies(self) -> dict[str, Path]:
        """Every copy, by relative path (sorted)."""
        return dict(sorted({**self.library_sources, **self.headers, **self.host_sources, **self.host_headers,
                            **self.board_files}.items()))


def _placed(folder: str, files: tuple[Path, ...]) -> dict[str, Path]:
    """``files`` under ``folder`` by base name; a name taken twice gets its source folder's name in front."""
    placed: dict[str, Path] = {}
    for path in files:
        name = path.name
        if f"{folder}/{name}" in placed:
            name = f"{path.parent.parent.name}_{name}"
        placed[f"{folder}/{name}"] = path
    return placed


def runtime_files(generated: Mapping[str, str], runtime: RuntimeLibrary) -> RuntimeFiles:
    """What of ``runtime`` the generated files (name → C text) need, placed in the output folder."""
    # The weight files are data alone (and most of a big network's text): nothing there calls or includes a kernel.
    generated_c = [text for name, text in sorted(generated.items())
                   if name.endswith((".c", ".h")) and name not in WEIGHT_FILES]
    host = tuple(sorted(set(runtime.host_sources) & set(runtime.sources)))
    needed = used_sources(generated_c, [path for path in runtime.sources if path not in host])
    host_needed = used_sources(generated_c, host)
    library_texts = {f"generated/{name}": text for name, text in generated.items() if name not in WEIGHT_FILES}
    origins: dict[str, Path] = {}
    for path in needed:
        library_texts[str(path)] = path.read_text(encoding="utf-8")
        origins[str(path)] = path
    headers = header_closure(library_texts, origins, runtime.include_dirs)
    host_texts = {str(path): path.read_text(encoding="utf-8") for path in host_needed}
    host_only = {name: path for name, path in
                 header_closure(host_texts, {key: Path(key) for key in host_texts}, runtime.include_dirs).items()
                 if name not in headers}
    return RuntimeFiles(
        library_sources=_placed(LIBRARY_SOURCES, needed),
        headers={f"{LIBRARY_HEADERS}/{name}": path for name, path in headers.items()},
        host_sources=_placed(HOST_FILES, host_needed),
        host_headers={f"{HOST_FILES}/{name}": path for name, path in host_only.items()},
        external=runtime.external,
        board=runtime.board,
        board_files=_board_files(runtime.board),
    )


def _board_files(board: BoardSupport | None) -> dict[str, Path]:
    if board is None:
        return {}
    files = (*board.startup_sources, *((board.linker_script,) if board.linker_script else ()))
    return {f"{BOARD_FILES}/{path.name}": path for path in files}
