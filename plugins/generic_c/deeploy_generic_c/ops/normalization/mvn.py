"""MeanVarianceNormalization over any set of axes (default [0, 2, 3]), float32 and float64.

ONNX defines it by a function, ``(X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9)``;
here the variance is the mean of squared deviations (the same value without
the cancellation of ``E[X^2] - E[X]^2``), both statistics in double.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import reduced_axes, reduction_code
from deeploy_generic_c.parsing.common import HEADERS

EPSILON = "1e-9"
"""The constant of ONNX's function body (added to the standard deviation, not to the variance)."""


class MVNParser(NodeParser):
    """axes attribute (default [0, 2, 3])."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        shape = tuple(int(d) for d in x.shape)
        axes = reduced_axes([int(a) for a in NodeParser.attribute(node, "axes", [0, 2, 3])], len(shape))
        count = 1
        for axis in axes:
            count *= shape[axis]
        c_type = x.dtype.c_type
        passes = [
            (["double mean = 0.0;"], "mean += v;"),
            ([f"mean /= {count}.0;", "double variance = 0.0;"], "variance += (v - mean) * (v - mean);"),
            ([f"const double scale = 1.0 / (sqrt(variance / {count}.0) + {EPSILON});"],
             f"dst[at] = ({c_type})((v - mean) * scale);"),
        ]
        call = reduction_code(x.c_name, y.c_name, x.dtype, y.dtype, shape, axes, passes, [], elementwise=True)
        return {"call": call, "size": x.numel * 4}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MeanVarianceNormalization": (NodeMapper(MVNParser(), tuple(
        NodeBinding(NodeTypeChecker((t,), (t,)), TEMPLATE) for t in (dtypes.FLOAT32, dtypes.FLOAT64)),
        name="MeanVarianceNormalization float32/float64", tile_constraint=AlongAxes("reduce")),),
}

NODE_TESTED = ("MeanVarianceNormalization",)
