"""AffineGrid (float32, float64): the sampling grid of a batch of 2-D or 3-D affine transforms.

The grid of every image is ``theta @ [x, y, (z,) 1]`` at each output position,
where the normalised base coordinates depend only on the constant size and
``align_corners``; they are computed here with numpy exactly as ONNX's
reference does (``np.arange`` in float64) and written as tables, and the
kernel forms each product in double (the reference multiplies the float32
theta with its float64 base grid) before storing in the output type.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding

NODE_TESTED = ("AffineGrid",)


def base_coordinates(size: int, align_corners: bool) -> np.ndarray:
    """The normalised coordinates of ``size`` positions along one axis, as the reference's ``np.arange``."""
    if align_corners:
        if size == 1:
            raise NodeMismatch("attribute", "align_corners=1 needs at least two positions per axis")
        return np.arange(-1, 1 + 0.0001, 2.0 / (size - 1))
    step = 2.0 / size
    return np.arange(-1 + step / 2, 1, step)


def affine_grid_code(theta: str, y: str, c_type: str, batch: int, spatial: list[int], align_corners: bool) -> str:
    """The C statements: for every transform and output position, the matrix times the homogeneous position."""
    rank = len(spatial)
    axes = list(reversed(range(rank)))  # the grid lists x (the last axis) first
    lines = ["{", f"    const {c_type} *dcg_ag_t = (const {c_type} *){theta};", f"    {c_type} *dcg_ag_y = ({c_type} *){y};"]
    for axis, size in enumerate(spatial):
        values = base_coordinates(size, align_corners)
        if values.size != size:
            raise NodeMismatch("shape", f"the reference's grid has {values.size} positions along an axis of {size}")
        literals = ", ".join(float(v).hex() for v in values)
        lines.append(f"    static const double dcg_ag_c{axis}[{size}] = {{{literals}}};")
    lines += ["    int32_t dcg_ag_o = 0;", f"    for (int32_t n = 0; n < {batch}; ++n) {{",
              f"        const {c_type} *m = dcg_ag_t + n * {rank * (rank + 1)};"]
    depth = 2
    for axis, size in enumerate(spatial):
        lines.append("    " * depth + f"for (int32_t i{axis} = 0; i{axis} < {size}; ++i{axis}) {{")
        depth += 1
    indent = "    " * depth
    point = [f"dcg_ag_c{axis}[i{axis}]" for axis in axes] + ["1.0"]
    for row in range(rank):
        terms = " + ".join(f"(double)m[{row * (rank + 1) + k}] * {value}" for k, value in enumerate(point))
        lines.append(f"{indent}dcg_ag_y[dcg_ag_o++] = ({c_type})({terms});")
    for level in range(depth - 1, 0, -1):
        lines.append("    " * level + "}")
    lines.append("}")
    return "\n".join(lines)


class AffineGridParser(NodeParser):
    """2-D (theta N x 2 x 3) and 3-D (N x 3 x 4) transforms, a constant size, align_corners."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        theta, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        values = ctxt[node.inputs[1].name].values
        if values is None:
            raise NodeMismatch("shape", "size must be a constant")
        size = [int(v) for v in np.asarray(values).reshape(-1)]
        if len(size) not in (4, 5):
            raise NodeMismatch("shape", f"size {size} must be [N, C, H, W] or [N, C, D, H, W]")
        batch, spatial = size[0], size[2:]
        rank = len(spatial)
        if tuple(theta.shape) != (batch, rank, rank + 1):
            raise NodeMismatch("shape", f"theta {list(theta.shape)} must be [{batch}, {rank}, {rank + 1}]")
        if tuple(y.shape) != (batch, *spatial, rank):
            raise NodeMismatch("shape", f"the output has shape {list(y.shape)}, expected {[batch, *spatial, rank]}")
        if y.numel == 0:
            return {"call": "", "size": 0}
        code = affine_grid_code(theta.c_name, y.c_name, theta.dtype.c_type, batch, spatial,
                                bool(int(NodeParser.attribute(node, "align_corners", 0))))
        return {"call": code, "macs": y.numel * (rank + 1), "size": y.numel}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "AffineGrid": tuple(mapper for dtype in (dtypes.FLOAT32, dtypes.FLOAT64) for mapper in single_binding(
        AffineGridParser(), NodeTypeChecker((dtype, dtypes.INT64), (dtype,)), f"AffineGrid {dtype}")),
}
