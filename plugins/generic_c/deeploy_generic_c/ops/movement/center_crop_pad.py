"""CenterCropPad (any type): every axis cropped or zero-padded around its centre to a constant shape.

With static shapes each axis is an offset between output and input index:
half the size difference, rounded down (so an odd surplus leaves the extra
element at the end, as ONNX's reference slices).  The kernel is one loop per
output axis; on padded axes an index outside the input writes zero.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding

NODE_TESTED = ("CenterCropPad",)


def input_offsets(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> list[int]:
    """Input index minus output index on each axis: the crop's start (>= 0) or minus the padding before (< 0)."""
    return [(width - size) // 2 if width >= size else -((size - width) // 2) for width, size in zip(in_shape, out_shape)]


def crop_pad_code(x: str, y: str, c_type: str, in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    """The C statements copying the centred window of ``x`` into ``y`` (zero where it lies outside ``x``)."""
    offsets = input_offsets(in_shape, out_shape)
    strides = [math.prod(in_shape[axis + 1:]) for axis in range(len(in_shape))]
    lines = ["{", f"    const {c_type} *dcg_cp_x = (const {c_type} *){x};", f"    {c_type} *dcg_cp_y = ({c_type} *){y};",
             "    int32_t dcg_cp_o = 0;"]
    depth, terms, checks = 1, [], []
    for axis, size in enumerate(out_shape):
        if size == 1 and in_shape[axis] == 1:
            continue
        lines.append("    " * depth + f"for (int32_t i{axis} = 0; i{axis} < {size}; ++i{axis}) {{")
        depth += 1
        source = f"i{axis}" if offsets[axis] == 0 else f"(i{axis} + {offsets[axis]})"
        lines.append("    " * depth + f"const int32_t s{axis} = {source};")
        terms.append(f"s{axis}" if strides[axis] == 1 else f"s{axis} * {strides[axis]}")
        if size > in_shape[axis]:  # padded (an odd surplus of one pads only at the end: offset 0)
            checks.append(f"s{axis} >= 0 && s{axis} < {in_shape[axis]}")
    read = f"dcg_cp_x[{' + '.join(terms) or '0'}]"
    value = f"({' && '.join(checks)}) ? {read} : ({c_type})0" if checks else read
    lines.append("    " * depth + f"dcg_cp_y[dcg_cp_o++] = {value};")
    lines += ["    " * level + "}" for level in range(depth - 1, -1, -1)]
    return "\n".join(lines)


class CenterCropPadParser(NodeParser):
    """A constant target shape, all axes or the ``axes`` attribute's."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.dtype != y.dtype:
            raise NodeMismatch("dtype", f"output type {y.dtype} differs from input type {x.dtype}")
        values = ctxt[node.inputs[1].name].values
        if values is None:
            raise NodeMismatch("shape", "the target shape must be a constant")
        target = [int(v) for v in np.asarray(values).reshape(-1)]
        rank = len(x.shape)
        axes = [int(axis) for axis in NodeParser.attribute(node, "axes", None) or range(rank)]
        if len(axes) != len(target):
            raise NodeMismatch("attribute", f"shape has {len(target)} values for {len(axes)} axes")
        out_shape = list(x.shape)
        for axis, size in zip(axes, target):
            if not -rank <= axis < rank:
                raise NodeMismatch("attribute", f"axis {axis} is out of range for rank {rank}")
            if size < 0:
                raise NodeMismatch("attribute", f"the target size {size} is negative")
            out_shape[axis % rank] = size
        if tuple(out_shape) != tuple(y.shape):
            raise NodeMismatch("shape", f"the target gives shape {out_shape}, the graph has {list(y.shape)}")
        if y.numel == 0:
            return {"call": "", "size": 0}
        return {"call": crop_pad_code(x.c_name, y.c_name, x.dtype.c_type, tuple(x.shape), tuple(y.shape)),
                "size": 0}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "CenterCropPad": single_binding(CenterCropPadParser(), NodeTypeChecker((None, dtypes.INT64), (None,)),
                                    "CenterCropPad any type"),
}
