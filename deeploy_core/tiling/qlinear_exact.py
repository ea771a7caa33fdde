"""Tile constraints of exact mode's com.microsoft QLinearSoftmax and QLinearAveragePool.

* QLinearSoftmax carries the Softmax semantics it replaced: ``opset`` ≥ 13
  normalises along ``axis`` alone (every other axis may be cut, as for
  Softmax), older opsets over the flattened ``axis…`` dimensions (cut only
  before ``axis``, as for LayerNormalization).  Scales and zero points stay
  whole.
* QLinearAveragePool tiles as any pool, but exact mode sums in the order of
  the MLAS kernel ONNX Runtime runs for the *whole* layer, and which kernel
  that is depends on the layer's input size and padding (a tile whose window
  happens to cover its whole input is not a global pool).  Each tile's node
  therefore carries the layer's spatial input shape and pads
  (``layer_input_spatial``, ``layer_pads``) for the kernel to decide with.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import AlongAxes, Box, SlidingWindow


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


class LayerGeometryPool(SlidingWindow):
    """:class:`SlidingWindow` without weights whose tiles also name the whole layer's input size and pads."""

    def __init__(self) -> None:
        super().__init__(weights=False)

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        attrs = super().tile_attributes(node, ctxt, out)
        win = self._geometry(node, ctxt)
        attrs.setdefault("layer_input_spatial", list(ctxt[node.inputs[self.data_index].name].shape[2:]))
        attrs.setdefault("layer_pads", [*win.pads_begin, *win.pads_end])
        return attrs
