"""Platforms as data: engines with op mappings, a C runtime library and a lowering pipeline."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from deeploy_core.frontend.custom_ops import CustomOpSchema
from deeploy_core.mapping.binding import NodeMapper
from deeploy_core.passes import Pass
from deeploy_core.platform.placement import STATIC_ARRAYS, StaticPlacement
from deeploy_core.platform.verification import OpVerification
from deeploy_core.platform.runtime_library import RuntimeLibrary


@dataclass(frozen=True)
class Engine:
    """A compute engine (a core type, an accelerator) and the ops it implements."""

    name: str
    mappers: Mapping[str, tuple[NodeMapper, ...]]


@dataclass(frozen=True)
class Platform:
    """Everything the core needs to know about a target, as plain data."""

    name: str
    engines: tuple[Engine, ...]
    runtime: RuntimeLibrary = field(default_factory=RuntimeLibrary)
    lowering: Callable[[], list[Pass]] = field(default=lambda: [])
    arena_alignment: int = 16
    description: str = ""
    transfers: Any = None
    """How tiles move between memory levels (:class:`deeploy_core.tiling.TransferPrimitives`); None: no tiling."""
    tile_constraints: Mapping[str, Any] = field(default_factory=dict)
    """Per-op overrides of the core's tile constraints (kernel policy: whole channels, multiples of N, …)."""
    placement: StaticPlacement = STATIC_ARRAYS
    """Where the arena and the constants live (static arrays unless the platform says otherwise)."""
    parallelism: Any = None
    """How a cluster's cores share tiled layers (:class:`deeploy_core.tiling.parallel.ClusterParallelism`); None: one core."""
    code_transformations: tuple[str, ...] = ()
    """Installed code-transformation extensions this platform's chain always includes, by name, in order (the
    user's ``--code-transformation`` names run after them); any other installed transformation runs only when
    the user names it."""
    custom_ops: tuple[CustomOpSchema, ...] = ()
    """Output types and shapes of the ops without an ONNX schema that this platform maps (Deeploy's
    ``IntegerMean``, a vendor's ``com.example::Foo``): the front end types their nodes with them."""
    verification: Mapping[str, tuple[OpVerification, ...]] = field(default_factory=dict)
    """Per op key, what its kernels' arithmetic was checked against (``supported-ops`` shows it); an op
    without an entry is listed with no verification (``unstated``)."""

    def mappers_for(self, op_type: str) -> list[tuple[Engine, NodeMapper]]:
        """Every (engine, mapper) that claims ``op_type``, in engine order."""
        return [(engine, mapper) for engine in self.engines for mapper in engine.mappers.get(op_type, ())]

    def op_types(self) -> list[str]:
        """All op types some engine maps, sorted."""
        return sorted({op for engine in self.engines for op in engine.mappers})
