"""How a Mish node becomes a call of the C kernel: parser, type checker, template.

Imported only when a compile uses the op (the plugin's factory imports it), so
loading the plugin costs nothing.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)

MISH_CALL = NodeTemplate("dcx_mish_f32(${X}, ${Y}, ${size});", headers=("dcx_mish.h",))
"""One call over the whole tensor; the tiler renders it again per tile with the tile's buffers."""


class MishParser(NodeParser):
    """Any shape: element-wise over the dense tensor."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        return {"X": x.c_name, "Y": y.c_name, "size": y.numel}

    def count_ops(self, representation: OperatorRepresentation) -> int:
        """exp, log1p, tanh and a product per element: counted as four operations."""
        return 4 * int(representation["size"])


def mish_mapper() -> NodeMapper:
    """The mapper both platforms use (their generic C kernels take the same dense float buffers)."""
    checker = NodeTypeChecker((dtypes.FLOAT32,), (dtypes.FLOAT32,))
    return NodeMapper(MishParser(), (NodeBinding(checker, MISH_CALL),), name="Mish float32 (deeploy-example-mish)")
