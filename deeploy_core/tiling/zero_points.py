"""The tile constraint of ONNX's ``MatMulInteger``: a matrix product whose zero points follow rows and columns.

``MatMulInteger(A, B, a_zero_point, b_zero_point)`` subtracts A's zero point
per row (a vector of M values, ``[M]`` or ``[..., M, 1]``) and B's per column
(``[N]`` or ``[..., 1, N]``), or one value each.  A tile of output rows and
columns therefore reads the matching run of each zero-point vector, exactly as
it reads the matching rows of A and columns of B; the generic
:class:`~deeploy_core.tiling.geometry.MatrixProduct` only knows parameters
along output axis 1, which is the columns of a matrix but never its rows.
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Box, Extent, MatrixProduct


class ZeroPointMatrixProduct(MatrixProduct):
    """MatrixProduct with A's zero point (input 2) cut like the output rows and B's (input 3) like its columns."""

    FOLLOWS = {2: -2, 3: -1}
    """Zero-point input index → the output axis (counted from the end) whose tile it follows."""

    def _vector_zero_point(self, node: gs.Node, ctxt: NetworkContext, index: int) -> bool:
        """Whether input ``index`` is a present zero point with more than one value."""
        return (index in self.FOLLOWS and index < len(node.inputs) and bool(node.inputs[index].name)
                and math.prod(ctxt[node.inputs[index].name].shape) > 1)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        boxes = super().input_boxes(node, ctxt, out)
        if self._has_vector_operand(node, ctxt):
            return boxes
        for index, axis in self.FOLLOWS.items():
            if self._vector_zero_point(node, ctxt, index):
                boxes[index] = tuple(out[axis] if dim > 1 else (0, 1) for dim in ctxt[node.inputs[index].name].shape)
        return boxes

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        extents = super().input_extents(node, ctxt)
        if self._has_vector_operand(node, ctxt):
            return extents
        rank = len(self._out_shape(node, ctxt))
        for index, axis in self.FOLLOWS.items():
            if self._vector_zero_point(node, ctxt, index):
                shape = ctxt[node.inputs[index].name].shape
                extents[index] = tuple(Extent(dim, rank + axis) if dim > 1 else Extent(dim) for dim in shape)
        return extents
