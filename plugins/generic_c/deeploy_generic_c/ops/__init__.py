"""Op tables of the generic C platform, one module per family of operators.

Each module defines ``MAPPERS: dict[str, tuple[NodeMapper, ...]]`` and, for ops
without an ONNX schema (Deeploy's dialect), ``SCHEMAS: tuple[CustomOpSchema, ...]``;
modules are collected in name order so that adding a family never means editing a list.
"""

from __future__ import annotations

import importlib
import pkgutil

from types import ModuleType

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper


def _family_modules() -> list[ModuleType]:
    """The public modules of this package in name order (private helpers start with ``_``)."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return [importlib.import_module(f"{__name__}.{name}") for name in names]


def collect_custom_ops() -> tuple[CustomOpSchema, ...]:
    """The declarations of every schema-less op the modules map, in module order."""
    return tuple(schema for module in _family_modules() for schema in getattr(module, "SCHEMAS", ()))


def collect_mappers() -> dict[str, tuple[NodeMapper, ...]]:
    """Every op type of every module in this package, mappers in module order."""
    table: dict[str, tuple[NodeMapper, ...]] = {}
    for module in _family_modules():
        for op_type, mappers in getattr(module, "MAPPERS", {}).items():
            table[op_type] = table.get(op_type, ()) + tuple(mappers)
    return table
