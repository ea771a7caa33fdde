"""Resize (opsets 11 to 19 signatures): nearest, linear and cubic interpolation over any axes, any rank.

The layer's shapes and constant scales/sizes/roi fix where every output
element reads from, so the per-axis taps (input offsets and weights, see
:mod:`._resize_taps`) are written into the layer as ``static const`` tables
and the kernel is loops with constant bounds: one loop per output axis, and
for linear and cubic one loop per tap of every resized axis inside them
(:mod:`._resize_c`, which sums in the reference's order).  Nearest reads one
element per output and copies it, so it serves every element type (bool
included) bit-exactly.  Linear and cubic accumulate in float for float32 and
in double for float64 and integer types, which are rounded half to even and
saturated, as the reference's saturating cast does.

Upsample needs no kernel of its own: the importer's version converter turns
it into Resize before mapping.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.resize import PAIRWISE_FROM, ResizeLoops, resize_code
from deeploy_generic_c.parsing.resize_plan import ResizeFormError, resized_axes
from deeploy_generic_c.parsing.resize_tiles import ResizeTiles
from deeploy_generic_c.parsing.resize_taps import (
    COORDINATE_MODES,
    MODES,
    NEAREST_MODES,
    AxisTaps,
    Interpolation,
    axis_taps,
)

NODE_TESTED = ("Resize",)


def _text(node: gs.Node, name: str, default: str) -> str:
    value = NodeParser.attribute(node, name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def _constant(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> np.ndarray | None:
    """A constant optional input (None when absent or empty: opset 11/13 write an empty scales next to sizes)."""
    if not NodeParser.is_present(node, index):
        return None
    values = ctxt[node.inputs[index].name].values
    if values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    array = np.asarray(values).reshape(-1)
    return None if array.size == 0 else array


def interpolation_of(node: gs.Node) -> Interpolation:
    """The node's interpolation attributes, each checked against the values ONNX defines."""
    mode = _text(node, "mode", "nearest")
    coordinate_mode = _text(node, "coordinate_transformation_mode", "half_pixel")
    nearest_mode = _text(node, "nearest_mode", "round_prefer_floor")
    for name, value, allowed in (("mode", mode, MODES), ("coordinate_transformation_mode", coordinate_mode,
                                 COORDINATE_MODES), ("nearest_mode", nearest_mode, NEAREST_MODES)):
        if value not in allowed:
            raise NodeMismatch("attribute", f"{name}={value!r} is not one of {', '.join(allowed)}")
    antialias = bool(int(NodeParser.attribute(node, "antialias", 0)))
    if antialias and mode == "nearest":
        raise NodeMismatch("attribute", "antialias=1 is defined for linear and cubic only, not nearest")
    return Interpolation(mode, coordinate_mode, nearest_mode, float(NodeParser.attribute(node, "cubic_coeff_a", -0.75)),
                         bool(int(NodeParser.attribute(node, "exclude_outside", 0))), antialias)


def _dense_strides(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(math.prod(shape[axis + 1:]) for axis in range(len(shape)))


def summed_pairwise(shape: tuple[int, ...], layout: list[int], taps: dict[int, AxisTaps]) -> frozenset[int]:
    """The resized axes whose taps numpy sums pairwise in the reference: eight or more taps along an axis with
    nothing but length-one axes after it in the reference's layout (``layout``: the node's ``axes``, which the
    reference moves last in that order, or all axes), i.e. a contiguous reduction."""
    pairwise = set()
    for axis, axis_taps in taps.items():
        position = layout.index(axis)
        if axis_taps.count >= PAIRWISE_FROM and math.prod(shape[later] for later in layout[position + 1:]) == 1:
            pairwise.add(axis)
    return frozenset(pairwise)


class ResizeParser(NodeParser):
    """Constant scales or sizes (and roi), any axes; nearest (every nearest_mode), linear, cubic; every
    coordinate_transformation_mode; antialias, exclude_outside, keep_aspect_ratio_policy."""

    inputs = (1, 4)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.dtype != y.dtype:
            raise NodeMismatch("dtype", f"output type {y.dtype} differs from input type {x.dtype}")
        interpolation = interpolation_of(node)
        arithmetic = x.dtype in (dtypes.FLOAT32, dtypes.FLOAT64) or not (x.dtype.is_float or x.dtype.name == "bool")
        if interpolation.mode != "nearest" and not arithmetic:
            raise NodeMismatch("dtype", f"{interpolation.mode} interpolation of {x.dtype} is not supported "
                                        "(nearest copies any type; linear and cubic take float32, float64, integers)")
        roi = _constant(ctxt, node, 1, "roi") if interpolation.coordinate_mode == "tf_crop_and_resize" else None
        if interpolation.coordinate_mode == "tf_crop_and_resize" and roi is None:
            raise NodeMismatch("shape", "coordinate_transformation_mode=tf_crop_and_resize needs a roi")
        scales = _constant(ctxt, node, 2, "scales")
        sizes = _constant(ctxt, node, 3, "sizes")
        axes = NodeParser.attribute(node, "axes", None)
        policy = _text(node, "keep_aspect_ratio_policy", "stretch")
        if sizes is not None and policy == "stretch" and sizes.size == len(axes or x.shape):
            # stretched sizes are the output's (shape inference checked it); a tile of the copied axes
            # (_resize_tiles) has its own, smaller, output there
            listed = [int(axis) % len(x.shape) for axis in axes] if axes else range(len(x.shape))
            sizes = np.array([y.shape[axis] for axis in listed], dtype=np.int64)
        try:
            changed, out_shape = resized_axes(
                tuple(x.shape), None if scales is None else scales.astype(np.float32, copy=False), sizes,
                None if axes is None else [int(axis) for axis in axes], roi, policy)
        except ResizeFormError as error:
            raise NodeMismatch("attribute", str(error)) from None
        if tuple(out_shape) != tuple(y.shape):
            raise NodeMismatch("shape", f"the scales/sizes give output shape {list(out_shape)}, "
                                        f"the graph has {list(y.shape)}")
        taps = {plan.axis: axis_taps(interpolation, plan.width, plan.count, plan.scale, plan.roi) for plan in changed}
        layout = list(range(len(x.shape))) if axes is None else [int(axis) % len(x.shape) for axis in axes]
        loops = ResizeLoops(x.dtype, _dense_strides(tuple(x.shape)), tuple(y.shape), taps,
                            tuple(plan.axis for plan in changed), summed_pairwise(tuple(x.shape), layout, taps),
                            float(NodeParser.attribute(node, "extrapolation_value", 0.0)))
        if y.numel == 0:
            return {"call": "", "size": 0}
        reads = math.prod(axis_taps.count for axis_taps in taps.values())
        return {"call": resize_code(x.c_name, y.c_name, loops), "size": y.numel * reads}


def _checker() -> NodeTypeChecker:
    """Any data type (the parser refuses interpolation of bool); roi/scales of any float type; int64 sizes."""
    return NodeTypeChecker((None, None, None, dtypes.INT64), (None,))


RESIZE = NodeTemplate("${call}", headers=(*HEADERS, "math.h", "stdint.h"))
"""The parser writes the block; ``math.h`` for rint() of integer outputs, ``stdint.h`` for the 64-bit limits."""

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Resize": (NodeMapper(ResizeParser(), (NodeBinding(_checker(), RESIZE),),
                          name="Resize any type (nearest), numbers (linear, cubic)", tile_constraint=ResizeTiles()),),
}
