"""Reading a deployer's keyword options into the core's typed settings, in one place.

Platform factories receive ``**settings`` (the hook's contract) and pass them
on to the deployer, and a wrong key or value there used to surface much later
as a missing attribute deep in a stage.  :func:`read_deployer_options` turns
the mapping into :class:`~deeploy_core.compilation.settings.CompileSettings`
once, at construction, and refuses a key nobody declared.  The options that
belong to one extension never travel this way: the composer resolves them
against the extension's declared schema and hands each factory its own values
(:mod:`deeploy_core.options.resolution`).
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import Any, Mapping

from deeploy_core.codegen.api_names import DEFAULT_API
from deeploy_core.compilation.settings import CompileSettings

SETTING_NAMES = frozenset(f.name for f in fields(CompileSettings))
"""The keyword options every deployer takes; an extension option may not take one of these names."""


def read_deployer_options(options: Mapping[str, Any]) -> CompileSettings:
    """The typed form of a deployer's keyword options; an undeclared key is a caller's bug (TypeError)."""
    unknown = sorted(set(options) - SETTING_NAMES)
    if unknown:
        raise TypeError(f"unknown deployer option(s) {', '.join(map(repr, unknown))} "
                        f"(declared: {', '.join(sorted(SETTING_NAMES))}); an extension's own options are passed "
                        f"to its factory, which must not hand them on to the deployer")
    hierarchy_file = options.get("memory_hierarchy_file")
    return CompileSettings(
        input_shapes={str(name): tuple(int(d) for d in shape)
                      for name, shape in dict(options.get("input_shapes") or {}).items()},
        input_types=dict(options.get("input_types") or {}),
        quantization=str(options.get("quantization") or "exact"),
        network_name=str(options["network_name"]) if options.get("network_name") else None,
        code_transformations=tuple(str(name) for name in options.get("code_transformations") or ()),
        memory_hierarchy_file=Path(hierarchy_file) if hierarchy_file else None,
        tiling_solution=options.get("tiling_solution"),
        memory_map=options.get("memory_map"),
        c_api=options.get("c_api") or DEFAULT_API,
    )
