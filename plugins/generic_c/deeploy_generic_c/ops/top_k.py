"""TopK for every numeric element type: values and int64 indices, always sorted.

k is a constant, or (a run-time input) the length of the outputs' declared
static shape along the axis, which is all a fixed-size output can hold.

Each row keeps its best k in the outputs themselves, by insertion: an element
goes after every kept one that is at least as good, so of equal values the
lower index comes first (ONNX's reference sorts by value, then by index).  NaN
counts as larger than every number, as numpy's sort places it.  O(n * k) per
row with no scratch memory, which suits the small k of classifiers and
samplers on a microcontroller; ``sorted=0`` allows any order, so sorted it is.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import axis_geometry, row_loops
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.strided import block, normalise_axis
from deeploy_generic_c.ops.reduction.typed import NUMERIC


def better(largest: bool, is_float: bool, v: str, w: str) -> str:
    """C: ``v`` ranks strictly before ``w`` (NaN is the largest value)."""
    if not is_float:
        return f"{v} > {w}" if largest else f"{v} < {w}"
    if largest:
        return f"(({v} != {v} && {w} == {w}) || {v} > {w})"
    return f"(({w} != {w} && {v} == {v}) || {v} < {w})"


class TopKParser(NodeParser):
    """k a constant (or the outputs' static length), axis, largest, sorted (always sorted)."""

    inputs = (2, 2)
    outputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, values, indices = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name], ctxt[node.outputs[1].name]
        shape = tuple(int(d) for d in x.shape)
        if not shape:
            raise NodeMismatch("shape", "the input is a scalar: there is no axis to search")
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", -1)), len(shape))
        k_values = ctxt[node.inputs[1].name].values
        # A run-time k must be the one the static output shape was declared with (the outputs' size is fixed).
        k = int(np.asarray(k_values).reshape(-1)[0]) if k_values is not None else int(values.shape[axis])
        outer, length, inner = axis_geometry(shape, axis)
        if not 1 <= k <= length:
            raise NodeMismatch("attribute", f"k={k} is outside 1..{length} (the length of axis {axis})")
        largest = bool(int(NodeParser.attribute(node, "largest", 1)))
        c_type = x.dtype.c_type
        body = [
            f"const {c_type} *row = src + o * {length * inner} + i;",
            f"{c_type} *top = val + o * {k * inner} + i;",
            f"int64_t *where = idx + o * {k * inner} + i;",
            "int32_t kept = 0;",
            f"for (int32_t a = 0; a < {length}; ++a) {{",
            f"    const {c_type} v = row[a * {inner}];",
            "    int32_t p = kept;",
            f"    while (p > 0 && {better(largest, x.dtype.is_float, 'v', f'top[(p - 1) * {inner}]')}) --p;",
            f"    if (p >= {k}) continue;",
            f"    for (int32_t q = kept < {k} ? kept : {k - 1}; q > p; --q) {{",
            f"        top[q * {inner}] = top[(q - 1) * {inner}];",
            f"        where[q * {inner}] = where[(q - 1) * {inner}];",
            "    }",
            f"    top[p * {inner}] = v;",
            f"    where[p * {inner}] = a;",
            f"    if (kept < {k}) ++kept;",
            "}",
        ]
        lines = [f"const {c_type} *src = (const {c_type} *){x.c_name};",
                 f"{c_type} *val = ({c_type} *){values.c_name};",
                 f"int64_t *idx = (int64_t *){indices.c_name};"]
        return {"call": block(lines + row_loops(outer, inner, body)), "size": x.numel * k}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "stdint.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "TopK": (NodeMapper(TopKParser(), tuple(NodeBinding(NodeTypeChecker((dtype, dtypes.INT64), (dtype, dtypes.INT64)), TEMPLATE)
                                            for dtype in NUMERIC), name="TopK any numeric type"),),
}

NODE_TESTED = ("TopK",)
