"""How a Slice layer is cut into tiles: every output axis, each tile reading the strided input range it picks.

Slice maps output position ``o`` of an axis to input position
``begin + o · step`` (``begin`` already clamped as the kernel clamps it), so an
output range ``[o0, o1)`` reads ``begin + o0 · step`` to ``begin + (o1 - 1) ·
step`` and nothing else: the tile's kernel is the same strided copy with its
own begin offset in the tile's input box.  Every tile thus moves at most
``(t - 1) · |step| + 1`` input elements per axis, so a slice of a large
activation (a ViT's class token, the half a GLU keeps) no longer needs the
whole of it in L1.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Extent, NetworkContext, TileConstraint
from deeploy_generic_c.parsing.tile_inputs import constant_ints, whole_parameter_boxes, whole_parameter_extents

TILE_BEGIN_ATTRIBUTE = "tile_slice_begin"
"""The attribute a tile's node carries: its begin per axis in the tile's input box (the parser prefers it)."""


def slice_begin_and_steps(node: gs.Node, ctxt: NetworkContext) -> tuple[list[int], list[int]] | None:
    """The clamped begin and the step of every axis, as the kernel takes them; None unless the bounds are constants."""
    shape = ctxt[node.inputs[0].name].shape
    rank = len(shape)
    starts = constant_ints(ctxt, node, 1)
    if starts is None or constant_ints(ctxt, node, 2) is None:
        return None
    axes = constant_ints(ctxt, node, 3) or list(range(len(starts)))
    steps = constant_ints(ctxt, node, 4) or [1] * len(starts)
    begin, stride = [0] * rank, [1] * rank
    for start, axis, step in zip(starts, axes, steps):
        axis %= rank
        if step == 0:
            return None
        start = start + shape[axis] if start < 0 else start
        begin[axis] = min(max(start, 0), shape[axis]) if step > 0 else min(max(start, 0), shape[axis] - 1)
        stride[axis] = step
    return begin, stride


class SliceTiles(TileConstraint):
    """Every output axis; a tile reads the strided range of the input its outputs come from."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        if slice_begin_and_steps(node, ctxt) is None:
            return ()
        return tuple(range(len(self._out_shape(node, ctxt))))

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        shape = ctxt[node.inputs[0].name].shape
        layout = slice_begin_and_steps(node, ctxt)
        rest = whole_parameter_boxes(node, ctxt)
        if layout is None:
            return [tuple((0, dim) for dim in shape), *rest]
        data = []
        for (o0, o1), begin, step in zip(out, *layout):
            first, last = begin + o0 * step, begin + (o1 - 1) * step
            data.append((min(first, last), max(first, last) + 1))
        return [tuple(data), *rest]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        shape = ctxt[node.inputs[0].name].shape
        layout = slice_begin_and_steps(node, ctxt)
        steps = layout[1] if layout else [1] * len(shape)
        data = tuple(Extent(dim, axis, abs(step), 1 - abs(step)) if layout else Extent(dim)
                     for axis, (dim, step) in enumerate(zip(shape, steps)))
        return [data, *whole_parameter_extents(node, ctxt)]

    def tile_attributes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> dict[str, Any]:
        attrs = dict(node.attrs)
        layout = slice_begin_and_steps(node, ctxt)
        if layout is None:
            return attrs
        boxes = self.input_boxes(node, ctxt, out)[0]
        assert boxes is not None
        attrs[TILE_BEGIN_ATTRIBUTE] = [begin + window[0] * step - box[0]
                                       for begin, step, window, box in zip(*layout, out, boxes)]
        return attrs
