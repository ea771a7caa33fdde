"""A Cortex-M platform as data: generic C's platform, with CMSIS-NN kernels in front and the core's board.

The platform is composed, not copied: the generic-c plugin's installed data
(its engines, runtime, lowering, verification) is the base, CMSIS-NN's mappers
are tried before generic C's for the ops they cover, and a layer CMSIS-NN
cannot run (float, exact ONNX Runtime rounding, asymmetric weights) falls
through to generic C's kernels unchanged.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from deeploy_core.plugin_api import Engine, NodeMapper, Platform, installed_platform

from deeploy_cortex_m.board import arm_board
from deeploy_cortex_m.cmsis_nn import cmsis_nn
from deeploy_cortex_m.cores import CORES
from deeploy_cortex_m.lowering import cortex_m_lowering
from deeploy_cortex_m.ops import cmsis_mappers
from deeploy_cortex_m.names import FALLBACK_PLATFORM
from deeploy_cortex_m.verification import CMSIS_VERIFICATION


def _merged(base: dict[str, tuple[NodeMapper, ...]], first: dict[str, tuple[NodeMapper, ...]]) -> dict[
        str, tuple[NodeMapper, ...]]:
    """``base`` with ``first``'s mappers tried before its own, op by op."""
    merged = dict(base)
    for op, mappers in first.items():
        merged[op] = (*mappers, *base.get(op, ()))
    return merged


@lru_cache(maxsize=8)
def cortex_m_platform(core: str, cmsis_nn_path: str = "") -> Platform:
    """The platform for ``core`` (a key of :data:`CORES`); ``cmsis_nn_path`` becomes the build's default root."""
    spec = CORES[core]
    base = installed_platform(FALLBACK_PLATFORM)
    cmsis = cmsis_mappers(spec.mve)
    engines = tuple(Engine(engine.name, _merged(dict(engine.mappers), cmsis)) for engine in base.engines)
    runtime = replace(base.runtime, board=arm_board(spec), external=(cmsis_nn(default_root=cmsis_nn_path),))
    base_lowering = base.lowering
    return replace(
        base, name=core, engines=engines, runtime=runtime,
        lowering=lambda: [*base_lowering(), *cortex_m_lowering()],
        verification={**base.verification, **CMSIS_VERIFICATION},
        description=f"{spec.description}; generic C for the rest",
    )
