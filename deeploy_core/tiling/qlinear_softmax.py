"""The tile constraint of com.microsoft.QLinearSoftmax: whole rows along what its ``opset`` attribute reduces.

The contrib op carries the Softmax semantics it replaced: ``opset`` ≥ 13
normalises along ``axis`` alone (every other axis may be cut, as for Softmax),
older opsets over the flattened ``axis…`` dimensions (cut only before
``axis``, as for LayerNormalization).  Scales and zero points stay whole.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import AlongAxes


class QLinearSoftmaxRows(AlongAxes):
    """:class:`AlongAxes` of kind ``softmax`` or ``layernorm`` by the node's ``opset``."""

    def __init__(self) -> None:
        super().__init__("softmax")

    def _reduced(self, node: gs.Node, ctxt: NetworkContext) -> tuple[set[int], bool]:
        rank = len(ctxt[node.inputs[0].name].shape)
        axis = int(node.attrs.get("axis", -1)) % rank
        if int(node.attrs.get("opset", 13)) >= 13:
            return {axis}, True
        return set(range(axis, rank)), True
