"""Bindings and mappers: the alternatives the parser chooses among for a node."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from deeploy_core.mapping.kernel_runtime import KernelRuntime
from deeploy_core.mapping.parser import NodeParser
from deeploy_core.mapping.template import NodeTemplate
from deeploy_core.mapping.typecheck import NodeTypeChecker

if TYPE_CHECKING:  # onnx-graphsurgeon, which the constraint's module loads, is too heavy for loading plugins
    from deeploy_core.mapping.tile_constraint import TileConstraint


@dataclass(frozen=True)
class NodeBinding:
    """A kernel for one type signature: type checker + template (+ extra code transformations)."""

    type_checker: NodeTypeChecker
    template: NodeTemplate
    transformations: tuple[object, ...] = field(default=())


@dataclass(frozen=True)
class NodeMapper:
    """A parser with the bindings that can implement what it parsed, tried in order.

    ``tile_constraint`` and ``runtime`` belong to the kernel rather than to the
    platform: an operator plugin's mapper carries its own tile geometry and C
    files (see :class:`~deeploy_core.extensions.OperatorExtension`), so the
    tiler and the build find them on the layer that uses the kernel.  None
    means the platform's and the core's defaults.
    """

    parser: NodeParser
    bindings: tuple[NodeBinding, ...]
    name: str = ""
    tile_constraint: TileConstraint | None = None
    runtime: KernelRuntime | None = None
    extension: str = field(default="", compare=False)
    """The operator extension that supplied this mapper ("" for a platform's own); the core sets it when it makes
    an operator plugin's mapper, so that ``report.json``'s provenance can name the plugins whose kernels ran."""

    def label(self) -> str:
        """How reports name this alternative."""
        return self.name or type(self.parser).__name__
