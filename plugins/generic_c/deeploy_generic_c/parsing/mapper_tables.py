"""Merging op tables: op type -> mappers, the mappers of earlier modules tried first.

The platform's table is merged from the operator families in precedence order, and a family package merges its
variant modules the same way; one function does both, so the rule (concatenate per op type, in module order)
is stated once.
"""

from __future__ import annotations

from collections.abc import Iterable
from types import ModuleType

from deeploy_core.plugin_api import NodeMapper


def merged_mappers(modules: Iterable[ModuleType]) -> dict[str, tuple[NodeMapper, ...]]:
    """The ``MAPPERS`` of ``modules`` in one table, each op type's mappers in module order (modules without one
    add nothing)."""
    table: dict[str, tuple[NodeMapper, ...]] = {}
    for module in modules:
        for op_type, mappers in getattr(module, "MAPPERS", {}).items():
            table[op_type] = table.get(op_type, ()) + tuple(mappers)
    return table
