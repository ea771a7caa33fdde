"""How a Pad layer is cut into tiles: a window over its output, each tile reading the part of the input it shows.

A constant-mode Pad maps output position ``o`` of an axis to input position
``o - begin`` (padding where that falls outside the input; a negative
``begin`` crops), so any output range reads one input range and fills the
rest with the constant.  Each tile's kernel is the same ``dcg_pad`` with the
tile's own begin offset, which is all the kernel needs.  A tile that lies
entirely in the padding still reads one input element (a transfer of nothing
is no transfer at all on every platform), and maps every output outside it.
Reflect, edge and wrap modes read input elements far from the output
position, so their padded axes stay whole; the other axes are cut freely.
Without this, a MobileNetV2's first padded activation (96 x 96 x 16 float)
needed 903,515 bytes of L1 at once.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Extent, NetworkContext, TileConstraint
from deeploy_generic_c.parsing.tile_inputs import constant_ints, data_extents_following, whole_parameter_boxes

TILE_BEGIN_ATTRIBUTE = "tile_pads_begin"
"""The attribute a tile's node carries: its own begin offset per axis (the parser prefers it to the pads input)."""


def _mode(node: gs.Node) -> str:
    mode = node.attrs.get("mode", "constant")
    return mode.decode() if isinstance(mode, bytes) else str(mode)


def pads_per_axis(node: gs.Node, ctxt: NetworkContext, rank: int) -> tuple[list[int], list[int]] | None:
    """Begin and end pads of every axis (the ``axes`` input applied); None while the pads are not constants."""
    pads = constant_ints(ctxt, node, 1)
    if pads is None:
        return None
    axes = constant_ints(ctxt, node, 3) or list(range(rank))
    begin, end = [0] * rank, [0] * rank
    for position, axis in enumerate(axes):
        begin[axis % rank] = pads[position]
        end[axis % rank] = pads[position + len(axes)]
    return begin, end


class PadTiles(TileConstraint):
    """A window over the output (constant mode: every axis; other modes: the axes they do not pad)."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        rank = len(ctxt[node.inputs[0].name].shape)
        pads = pads_per_axis(node, ctxt, rank)
        if pads is None:
            return ()
        begin, end = pads
        if _mode(node) == "constant":
            return tuple(range(rank))
        return tuple(axis for axis in range(rank) if begin[axis] == 0 and end[axis] == 0)

    def _read_range(self, begin: int, length: int, out: tuple[int, int]) -> tuple[int, int]:
        """The input range output range ``out`` shows; one element next to it when it shows none."""
        start, stop = max(out[0] - begin, 0), min(out[1] - begin, length)
        if start < stop:
            return start, stop
        nearest = min(max(out[0] - begin, 0), length - 1)
        return nearest, nearest + 1

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        shape = ctxt[node.inputs[0].name].shape
        tiled = set(self.tiled_axes(node, ctxt))
        pads = pads_per_axis(node, ctxt, len(shape))
        begin = pads[0] if pads else [0] * len(shape)
        data = tuple(self._read_range(begin[axis], dim, out[axis]) if axis in tiled else (0, dim)
                     for axis, dim in enumerate(shape))
        return [data, *whole_parameter_boxes(node, ctxt)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        return data_extents_following(node, ctxt, set(self.tiled_axes(node, ctxt)))

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        attrs = dict(node.attrs)
        shape = ctxt[node.inputs[0].name].shape
        pads = pads_per_axis(node, ctxt, len(shape))
        if pads is None:
            return attrs
        boxes = self.input_boxes(node, ctxt, out)[0]
        assert boxes is not None
        # output position out[axis][0] + i reads input out[axis][0] + i - begin, i.e. box position that minus start
        attrs[TILE_BEGIN_ATTRIBUTE] = [begin + box[0] - window[0]
                                       for begin, box, window in zip(pads[0], boxes, out)]
        return attrs
