"""The tile constraint of a Gemm or MatMul fused with its requantisation (``RequantizedGemm``, Deeploy's ``RQGemm``,
``RequantizedMatMul``).

The fused node's inputs are A, B, an optional bias C and two requantisation
parameters (scalars or one value per output column).  Which input is C
depends on the input count, and C may be a whole ``[M, N]`` matrix: read as a
per-column parameter, a tile of rows and columns would ask for a box of C
along the wrong axis.  So the constraint looks at the node: with five inputs C
(input 2) broadcasts like Gemm's bias and inputs 3 and 4 are per column; with
four there is no C and inputs 2 and 3 are the parameters.  ``RequantizedMatMul``
is read the same way; its parameters follow output axis 1 at every rank (the
rows of a batched 3-D product), its bias the columns.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.tiling.geometry import Box, Extent, MatrixProduct, TileConstraint


class RequantisedGemmProduct(TileConstraint):
    """Gemm's MatrixProduct: C (input 2 of a 5-input node) broadcast like a bias, the two parameters per column."""

    def __init__(self, gemm: bool = True) -> None:
        self.with_bias = MatrixProduct(bias=2, channel_parameters=(3, 4), gemm=gemm, axis_one_channels=not gemm)
        self.without_bias = MatrixProduct(channel_parameters=(2, 3), gemm=gemm, axis_one_channels=not gemm)

    def _product(self, node: gs.Node) -> MatrixProduct:
        return self.with_bias if len(node.inputs) == 5 else self.without_bias

    def tiled_axes(self, node: gs.Node, ctxt: NetworkContext) -> tuple[int, ...]:
        return self._product(node).tiled_axes(node, ctxt)

    def whole_axis_reason(self, node: gs.Node, ctxt: NetworkContext, axis: int) -> str:
        return self._product(node).whole_axis_reason(node, ctxt, axis)

    def input_boxes(self, node: gs.Node, ctxt: NetworkContext, out: Box) -> list[Box | None]:
        return self._product(node).input_boxes(node, ctxt, out)

    def input_extents(self, node: gs.Node, ctxt: NetworkContext) -> list[tuple[Extent, ...] | None]:
        return self._product(node).input_extents(node, ctxt)
