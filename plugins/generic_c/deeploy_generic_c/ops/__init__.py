"""Op tables of the generic C platform, one module per family of operators.

Each module defines ``MAPPERS: dict[str, tuple[NodeMapper, ...]]``; modules are
collected in name order so that adding a family never means editing a list.
"""

from __future__ import annotations

import importlib
import pkgutil

from deeploy_core.plugin_api import NodeMapper


def collect_mappers() -> dict[str, tuple[NodeMapper, ...]]:
    """Every op type of every module in this package, mappers in module order."""
    table: dict[str, tuple[NodeMapper, ...]] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda module: module.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        for op_type, mappers in getattr(module, "MAPPERS", {}).items():
            table[op_type] = table.get(op_type, ()) + tuple(mappers)
    return table
