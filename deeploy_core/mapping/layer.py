"""A layer: one node with the mapper, binding and operator representation chosen for it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.mapping.binding import NodeBinding, NodeMapper


@dataclass
class Layer:
    """One unit of generated code (a node, or several fused by lowering)."""

    index: int
    node: gs.Node
    mapper: NodeMapper
    binding: NodeBinding
    representation: dict[str, Any]
    c_name: str
    transients: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.node.name)

    @property
    def op_type(self) -> str:
        return str(self.node.op)

    @property
    def input_names(self) -> list[str]:
        return [tensor.name for tensor in self.node.inputs if tensor.name]

    @property
    def output_names(self) -> list[str]:
        return [tensor.name for tensor in self.node.outputs if tensor.name]

    @property
    def ops(self) -> int:
        """Arithmetic operations per inference, as counted by the parser."""
        return self.mapper.parser.count_ops(self.representation)
