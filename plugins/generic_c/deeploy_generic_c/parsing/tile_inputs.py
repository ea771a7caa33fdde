"""Pieces the movement ops' tile constraints share: constant parameter inputs, and parameters read whole.

Pad, Slice and Resize tiles read their data input along some output axes and
every other input (pads, starts, scales, a constant value) whole; their
parameters are constants the constraint reads to place each tile.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Extent, NetworkContext


def constant_values(ctxt: NetworkContext, node: gs.Node, index: int) -> np.ndarray | None:
    """Input ``index`` flattened, when it is present and a constant; None otherwise."""
    if len(node.inputs) <= index or not node.inputs[index].name:
        return None
    values = ctxt[node.inputs[index].name].values
    return None if values is None else np.asarray(values).reshape(-1)


def constant_ints(ctxt: NetworkContext, node: gs.Node, index: int) -> list[int] | None:
    """Input ``index`` as Python integers, when it is present and a constant."""
    values = constant_values(ctxt, node, index)
    return None if values is None else [int(value) for value in values]


def whole_parameter_boxes(node: gs.Node, ctxt: NetworkContext) -> list[Box | None]:
    """Every input after the data, read whole (None for an absent optional input)."""
    return [tuple((0, dim) for dim in ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]


def whole_parameter_extents(node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
    """The sizes of :func:`whole_parameter_boxes` for the tiler's model."""
    return [tuple(Extent(dim) for dim in ctxt[t.name].shape) if t.name else None for t in node.inputs[1:]]


def data_extents_following(node: gs.Node, ctxt: NetworkContext,
                           tiled: Collection[int]) -> list[tuple[Extent, ...] | None]:
    """Input extents of a layer whose data follows the output along the ``tiled`` axes one to one."""
    shape = ctxt[node.inputs[0].name].shape
    data = tuple(Extent(dim, axis) if axis in tiled else Extent(dim) for axis, dim in enumerate(shape))
    return [data, *whole_parameter_extents(node, ctxt)]
