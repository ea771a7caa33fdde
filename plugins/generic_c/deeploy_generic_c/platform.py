"""The generic C platform as data: one engine, the op tables, the C runtime."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from deeploy_core.plugin_api import ALIAS_MAPPERS, HOST_MEMCPY, CustomOpSchema, Engine, Platform, RuntimeLibrary
from deeploy_generic_c.lowering import generic_c_lowering
from deeploy_generic_c.names import PLATFORM_NAME
from deeploy_generic_c.ops import collect_mappers
from deeploy_generic_c.ops.debug_print import DEBUG_PRINT_SCHEMA
from deeploy_generic_c.ops.dequant import DEQUANT_SCHEMA
from deeploy_generic_c.ops.integer_div import INTEGER_DIV_SCHEMA
from deeploy_generic_c.ops.integer_mean import INTEGER_MEAN_SCHEMA
from deeploy_generic_c.ops.quant import QUANT_SCHEMA

RUNTIME_DIR = Path(__file__).resolve().parent / "runtime"

DIALECT_SCHEMAS: tuple[CustomOpSchema, ...] = (INTEGER_DIV_SCHEMA, INTEGER_MEAN_SCHEMA, DEQUANT_SCHEMA, QUANT_SCHEMA,
                                                DEBUG_PRINT_SCHEMA)
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
    )
