"""Global pooling tiles for NCHW and channels-last inputs (com.microsoft.QLinearGlobalAveragePool ``channels_last``).

:class:`~deeploy_core.tiling.geometry.GlobalPool` cuts batch and channels
(axes 0 and 1) and reads whole planes, which is NCHW.  ONNX Runtime's
QLinearGlobalAveragePool also takes ``channels_last=1`` (NHWC, as tf2onnx keeps
TFLite's layout): there the channels are the last axis, of the input and of
the output, and cutting axis 1 would split a plane, so a tile would average
only part of it.  This constraint cuts the batch and the channel axis of
whichever layout the node declares.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Box, Extent, GlobalPool, full_box


def _channels_last(node: gs.Node) -> bool:
    return bool(int(node.attrs.get("channels_last", 0)))


class LayoutGlobalPool(GlobalPool):
    """GlobalPool that follows ``channels_last``: batch and channels may be cut; every tile reads whole planes."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        if not _channels_last(node):
            return super().tiled_axes(node, ctxt)
        return (0, len(ctxt[node.outputs[0].name].shape) - 1)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        if not _channels_last(node):
            return super().input_boxes(node, ctxt, out)
        x_shape = ctxt[node.inputs[0].name].shape
        boxes: list[Box | None] = [(out[0], *full_box(x_shape[1:-1]), out[-1])]
        return boxes + [full_box(ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        if not _channels_last(node):
            return super().input_extents(node, ctxt)
        x_shape = ctxt[node.inputs[0].name].shape
        last = len(ctxt[node.outputs[0].name].shape) - 1
        first = (Extent(x_shape[0], 0), *(Extent(d) for d in x_shape[1:-1]), Extent(x_shape[-1], last))
        return [first] + [tuple(Extent(d) for d in ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        return dict(node.attrs)
