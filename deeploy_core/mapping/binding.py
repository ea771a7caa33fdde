"""Bindings and mappers: the alternatives the parser chooses among for a node."""

from __future__ import annotations

from dataclasses import dataclass, field

from deeploy_core.mapping.parser import NodeParser
from deeploy_core.mapping.template import NodeTemplate
from deeploy_core.mapping.typecheck import NodeTypeChecker


@dataclass(frozen=True)
class NodeBinding:
    """A kernel for one type signature: type checker + template (+ extra code transformations)."""

    type_checker: NodeTypeChecker
    template: NodeTemplate
    transformations: tuple[object, ...] = field(default=())


@dataclass(frozen=True)
class NodeMapper:
    """A parser with the bindings that can implement what it parsed, tried in order."""

    parser: NodeParser
    bindings: tuple[NodeBinding, ...]
    name: str = ""

    def label(self) -> str:
        """How reports name this alternative."""
        return self.name or type(self.parser).__name__
