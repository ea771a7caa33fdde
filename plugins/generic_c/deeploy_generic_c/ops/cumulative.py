"""CumSum along a constant axis, ``exclusive`` and ``reverse``, for float and integer types (integers wrap).

The running sum is kept in the element's own type and added in order along
the axis, as numpy's ``cumsum`` does; integer sums wrap modulo 2**bits
(:mod:`deeploy_generic_c.kernels.reductions`).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.indexing import require_same_type
from deeploy_generic_c.kernels.reductions import combine
from deeploy_generic_c.kernels.strided import block, normalise_axis, typed_views


class CumSumParser(NodeParser):
    """``y[..., t, ...]`` = the sum of ``x`` up to ``t`` (before ``t`` when exclusive; from the end when reverse)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        if x.dtype == dtypes.BOOL:
            raise NodeMismatch("dtype", "CumSum of bool is not defined")
        if not x.shape:
            raise NodeMismatch("shape", "CumSum needs an input of rank >= 1")
        axis_values = np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "axis")).reshape(-1)
        if axis_values.size != 1:
            raise NodeMismatch("shape", f"axis must be one number, got {axis_values.tolist()}")
        axis = normalise_axis(int(axis_values[0]), len(x.shape))
        outer, length, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
        if x.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        reverse, exclusive = bool(NodeParser.attribute(node, "reverse", 0)), bool(NodeParser.attribute(node, "exclusive", 0))
        step = f"const int32_t at = (o * {length} + {f'{length - 1} - t' if reverse else 't'}) * {inner} + i;"
        add = combine(x.dtype, "add", "acc", "src[at]")
        update = [f"dst[at] = acc; {add}"] if exclusive else [f"{add} dst[at] = acc;"]
        lines = typed_views(x.dtype, {"src": x.c_name}, {"dst": y.c_name}) + [
            f"for (int32_t o = 0; o < {outer}; ++o) {{",
            f"    for (int32_t i = 0; i < {inner}; ++i) {{",
            f"        {x.dtype.c_type} acc = 0;",
            f"        for (int32_t t = 0; t < {length}; ++t) {{",
            f"            {step}",
            *(f"            {line}" for line in update),
            "        }",
            "    }",
            "}",
        ]
        return {"call": block(lines), "size": 0}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "CumSum": single_binding(CumSumParser(), NodeTypeChecker((None, None), (None,)), "CumSum any numeric type"),
}
NODE_TESTED = ("CumSum",)
