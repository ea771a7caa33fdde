"""The view operators every platform gets for free: no kernel, no copy.

Reshape, Flatten, Squeeze, Unsqueeze and Identity only reinterpret a dense
buffer, so their output is a reference to their input's memory.  So does a
Cast to the type its input already has, which PyTorch's TorchScript exporter
writes for ``.float()`` on a float tensor (timm's EfficientViT attention);
a Cast that changes the type is no view and is refused like any unmapped
node, naming both types.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping.binding import NodeBinding, NodeMapper
from deeploy_core.mapping.mismatch import NodeMismatch
from deeploy_core.mapping.parser import NodeParser, OperatorRepresentation
from deeploy_core.mapping.template import NodeTemplate
from deeploy_core.mapping.typecheck import NodeTypeChecker

ALIAS_OPS = ("Cast", "Flatten", "Identity", "Reshape", "Squeeze", "Unsqueeze")


class AliasParser(NodeParser):
    """Output is a view of input 0 (same element type and size)."""

    inputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        source, target = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if source.dtype != target.dtype or source.numel != target.numel:
            raise NodeMismatch("shape", f"output {target.shape} {target.dtype} is not a view of input {source.shape} {source.dtype}")
        return {"alias_of": source.name, "size": 0}

    def count_ops(self, representation: OperatorRepresentation) -> int:
        return 0


ALIAS_BINDING = NodeBinding(NodeTypeChecker((None, None), (None,), moves_storage_types=True),
                            NodeTemplate("/* view: no code */"))
ALIAS_MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    op: (NodeMapper(AliasParser(), (ALIAS_BINDING,), name=f"{op} (alias)"),) for op in ALIAS_OPS
}
"""Mappers to include in a platform engine so that view ops cost nothing."""
