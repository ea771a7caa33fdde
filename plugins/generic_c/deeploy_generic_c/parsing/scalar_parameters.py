"""The tile geometry of Deeploy's fused ops whose requantisation inputs count only by their first element.

``RequantizediGELU`` (x, mul, add, shift) and ``RQIntegerDiv`` (A, B, mul, add, shift) read ``mul[0]``,
``add[0]`` and ``shift[0]`` whatever shape those constants have.  Plain element-wise tiling would cut a
longer parameter along with the data, so a later tile would see another "first" element; here every tile
(and every core's share) receives the whole parameter, and its first element stays the model's.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Elementwise, Extent, NetworkContext


class ScalarParameters(Elementwise):
    """Element-wise on the first ``data_inputs`` inputs (numpy broadcasting); later inputs whole in every tile."""

    def __init__(self, data_inputs: int) -> None:
        self.data_inputs = data_inputs

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        boxes = super().input_boxes(node, ctxt, out)
        return [box if index < self.data_inputs or box is None else tuple((0, dim) for dim in ctxt[node.inputs[index].name].shape)
                for index, box in enumerate(boxes)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        extents = super().input_extents(node, ctxt)
        return [extent if index < self.data_inputs or extent is None
                else tuple(Extent(dim) for dim in ctxt[node.inputs[index].name].shape)
                for index, extent in enumerate(extents)]
