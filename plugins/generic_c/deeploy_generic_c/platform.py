"""The generic C platform as data: one engine, the op tables, the C runtime."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from deeploy_core.plugin_api import ALIAS_MAPPERS, HOST_MEMCPY, CustomOpSchema, Engine, Platform, RuntimeLibrary
from deeploy_generic_c.lowering import generic_c_lowering
from deeploy_generic_c.names import PLATFORM_NAME
from deeploy_generic_c.ops import collect_custom_ops, collect_mappers
from deeploy_generic_c.verification import VERIFICATION

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"

DIALECT_SCHEMAS: tuple[CustomOpSchema, ...] = collect_custom_ops()
"""Declarations of the Deeploy dialect ops (no ONNX schema) that the op tables map; pulp-cluster shares them."""


@lru_cache(maxsize=1)
def generic_c_platform() -> Platform:
    """The platform description (cached: it is immutable)."""
    mappers = dict(ALIAS_MAPPERS)
    mappers.update(collect_mappers())
    return Platform(
        name=PLATFORM_NAME,
        engines=(Engine("cpu", mappers),),
        runtime=RuntimeLibrary(
            include_dirs=(RUNTIME_DIR / "include",),
            sources=tuple(sorted((RUNTIME_DIR / "src").glob("*.c"))),
        ),
        lowering=generic_c_lowering,
        description="portable C99, single core",
        transfers=HOST_MEMCPY,
        custom_ops=DIALECT_SCHEMAS,
        verification=VERIFICATION,
    )
