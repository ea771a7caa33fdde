"""OneHot: constant ``depth``, ``values`` ([off, on], constant or run-time), any axis, any index and value type.

An index ``v`` (negative ones count from the end: ``v + depth``) switches on
position ``v`` of its row; an index outside ``[-depth, depth)`` leaves the row
all ``off`` (ONNX's definition, not an error).  Float indices are truncated
toward zero as the spec's cast to int64 does; NaN and indices beyond the
range are compared as floats first, so no out-of-range float-to-integer
conversion happens.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    DataType, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.kernels.strided import block, normalise_axis, typed_views


def _position(indices: DataType, depth: int) -> str:
    """``int64_t v`` = the index as a position in ``[0, depth)``, or ``depth`` (matches nothing) when outside."""
    if not indices.signed:  # compared before any conversion: a uint64 index beyond INT64_MAX is simply outside
        return (f"const int64_t v = (uint64_t)ind[o * inner + i] < (uint64_t){depth} ? (int64_t)ind[o * inner + i] "
                f": {depth};")
    if indices.is_float:
        return (f"const double f = (double)ind[o * inner + i]; "
                f"int64_t v = (f > -{depth + 1}.0 && f < {depth}.0) ? (int64_t)f : {depth}; "
                f"if (v < 0) v += {depth};")
    return (f"int64_t v = (int64_t)ind[o * inner + i]; "
            f"v = (v < -{depth} || v >= {depth}) ? {depth} : (v < 0 ? v + {depth} : v);")


class OneHotParser(NodeParser):
    """Output ``[*indices.shape[:axis], depth, *indices.shape[axis:]]`` of ``values``' type."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        indices, values, y = ctxt[node.inputs[0].name], ctxt[node.inputs[2].name], ctxt[node.outputs[0].name]
        if indices.dtype == dtypes.BOOL:
            raise NodeMismatch("dtype", "bool indices are not supported")
        if values.dtype != y.dtype or values.numel != 2:
            raise NodeMismatch("shape", f"values must be [off, on] of the output's type, got {list(values.shape)} "
                                        f"{values.dtype}")
        raw = np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "depth")).reshape(-1)
        if raw.size != 1 or not np.isfinite(raw[0]) or int(raw[0]) < 1:
            raise NodeMismatch("shape", f"depth must be one positive number, got {raw.tolist()}")
        depth = int(raw[0])
        rank = len(indices.shape)
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", -1)), rank + 1)
        outer, inner = math.prod(indices.shape[:axis]), math.prod(indices.shape[axis:])
        if list(y.shape) != [*indices.shape[:axis], depth, *indices.shape[axis:]]:
            raise NodeMismatch("shape", f"output shape {list(y.shape)} does not fit depth {depth} at axis {axis}")
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        c_index = indices.dtype.c_type
        lines = typed_views(y.dtype, {"values": values.c_name}, {"dst": y.c_name}) + [
            f"const {c_index} *ind = (const {c_index} *){indices.c_name};",
            f"const int32_t inner = {inner};",
            f"for (int32_t o = 0; o < {outer}; ++o) {{",
            "    for (int32_t i = 0; i < inner; ++i) {",
            "        " + _position(indices.dtype, depth),
            f"        for (int32_t d = 0; d < {depth}; ++d) dst[(o * {depth} + d) * inner + i] = "
            f"values[v == d ? 1 : 0];",
            "    }",
            "}",
        ]
        return {"call": block(lines), "size": 0}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "OneHot": single_binding(OneHotParser(), NodeTypeChecker((None, None, None), (None,)), "OneHot any type"),
}
NODE_TESTED = ("OneHot",)
