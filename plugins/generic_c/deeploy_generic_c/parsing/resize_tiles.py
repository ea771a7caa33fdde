"""How a Resize layer is cut into tiles on a platform with a small compute memory (pulp-cluster's L1).

The axes a Resize leaves alone (batch and channels, usually) map input to
output one to one, so a tile may take any range of them, reading the same
range of the input; the resized axes stay whole in every tile.  Without this a
U-Net's upsampling needed its whole input and output in L1 at once.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Box, Extent, NetworkContext, TileConstraint
from deeploy_generic_c.parsing.resize_plan import ResizeFormError, resized_axes
from deeploy_generic_c.parsing.tile_inputs import constant_values, data_extents_following, whole_parameter_boxes


def _constant(ctxt: NetworkContext, node: gs.Node, index: int) -> np.ndarray | None:
    array = constant_values(ctxt, node, index)
    return None if array is None or array.size == 0 else array


def _text(value: Any, default: str) -> str:
    value = default if value is None else value
    return value.decode() if isinstance(value, bytes) else str(value)


class ResizeTiles(TileConstraint):
    """Cuts the axes the Resize copies (same length, scale 1, whole crop); the resized ones stay whole."""

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        shape = tuple(ctxt[node.inputs[0].name].shape)
        axes = node.attrs.get("axes")
        policy = _text(node.attrs.get("keep_aspect_ratio_policy"), "stretch")
        if policy != "stretch" and axes is None:
            return ()  # the policy's scale is taken over every axis: a tile's sizes would change it
        coordinate_mode = _text(node.attrs.get("coordinate_transformation_mode"), "half_pixel")
        roi = _constant(ctxt, node, 1) if coordinate_mode == "tf_crop_and_resize" else None
        scales = _constant(ctxt, node, 2)
        try:
            changed, _ = resized_axes(shape, None if scales is None else scales.astype(np.float32),
                                      _constant(ctxt, node, 3), None if axes is None else [int(a) for a in axes],
                                      roi, policy)
        except ResizeFormError:
            return ()
        resized = {plan.axis for plan in changed}
        return tuple(axis for axis in range(len(shape)) if axis not in resized)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        tiled = set(self.tiled_axes(node, ctxt))
        shape = ctxt[node.inputs[0].name].shape
        data = tuple(out[axis] if axis in tiled else (0, dim) for axis, dim in enumerate(shape))
        return [data, *whole_parameter_boxes(node, ctxt)]

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        return data_extents_following(node, ctxt, set(self.tiled_axes(node, ctxt)))
