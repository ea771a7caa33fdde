"""Reading a deployer's keyword options into typed settings, in one place.

Platform factories receive ``**options`` (the hook's contract), and a wrong
key or value there used to surface much later as a missing attribute deep in
a stage.  :func:`read_deployer_options` turns the mapping into typed fields
once, at construction, and refuses a key nobody declared.  The core's own
settings (:class:`~deeploy_core.compilation.settings.CompileSettings`) are
kept apart from :class:`ExtensionOptions`, the options that belong to the
memory level, the tiler and cluster platforms and that are read by those
extensions alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping

from deeploy_core.compilation.settings import CompileSettings
from deeploy_core.tiling.solution import TilingSolution


@dataclass(frozen=True)
class ExtensionOptions:
    """Options that the composed extensions (not the core) act on, typed.

    Each field is read by exactly one extension, in that extension's
    constructor: the memory-level wrapper reads the hierarchy file and level
    sizes, the tiler the strategy and a solution to reuse, a cluster platform
    its core count.
    """

    level_sizes: dict[str, int] = field(default_factory=dict)
    """Memory level sizes in bytes by level name (``--l1``/``--l2``/``--l3``)."""
    memory_hierarchy_file: Path | None = None
    """A YAML hierarchy that replaces the memory level's own (``--memory-hierarchy FILE``)."""
    tiling_strategy: str | None = None
    """The tiler's CP-SAT objective (``--tiling-strategy``); None: the tiler's default."""
    tiling_solution: TilingSolution | None = None
    """A solution to reuse instead of solving (``--tiling-from``), always together with :attr:`memory_map`."""
    memory_map: dict[str, dict[str, int]] | None = None
    """The compute-level offsets of every tiled layer's blocks, reused together with :attr:`tiling_solution`."""
    cores: int | None = None
    """Cores of a cluster platform (``--cores``); None: the platform's default."""


_SETTINGS = {f.name for f in fields(CompileSettings)}
_EXTENSION_OPTIONS = {f.name for f in fields(ExtensionOptions)}


def read_deployer_options(options: Mapping[str, Any]) -> tuple[CompileSettings, ExtensionOptions]:
    """The typed form of a deployer's keyword options; an undeclared key is a caller's bug (TypeError)."""
    unknown = sorted(set(options) - _SETTINGS - _EXTENSION_OPTIONS)
    if unknown:
        raise TypeError(f"unknown deployer option(s) {', '.join(map(repr, unknown))} "
                        f"(declared: {', '.join(sorted(_SETTINGS | _EXTENSION_OPTIONS))})")
    hierarchy_file = options.get("memory_hierarchy_file")
    settings = CompileSettings(
        input_shapes={str(name): tuple(int(d) for d in shape)
                      for name, shape in dict(options.get("input_shapes") or {}).items()},
        input_types=dict(options.get("input_types") or {}),
        quantization=str(options.get("quantization") or "exact"),
        network_name=str(options["network_name"]) if options.get("network_name") else None,
        code_transformations=tuple(str(name) for name in options.get("code_transformations") or ()),
    )
    extension_options = ExtensionOptions(
        level_sizes={str(name): int(size) for name, size in dict(options.get("level_sizes") or {}).items()
                     if size is not None},
        memory_hierarchy_file=Path(hierarchy_file) if hierarchy_file else None,
        tiling_strategy=str(options["tiling_strategy"]) if options.get("tiling_strategy") else None,
        tiling_solution=options.get("tiling_solution"),
        memory_map=options.get("memory_map"),
        cores=int(options["cores"]) if options.get("cores") is not None else None,
    )
    return settings, extension_options
