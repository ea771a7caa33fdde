"""Integer ReduceSum and ReduceMean in the raw integer domain (Deeploy's integer dialect).

ReduceSum is exact in 64 bits and stored in the output's type; ReduceMean follows Deeploy's rounding
(``deeploy-op-semantics.md`` §3): half up by a shift for ``keepdims = 0`` and a power-of-two count, else the sum
plus half the count, away from zero, divided.  The family tries this module first for both op types, so integer
data gets Deeploy's semantics rather than :mod:`.typed`'s numpy ones; the loops are emitted inline with the exact
C types of their operands, so one template serves every integer input type.  :mod:`.integer_mean` reuses the
parser for ``IntegerMean``.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper, require_integer_operand


class IntegerReduceParser(NodeParser):
    """ReduceSum (exact, int32) and ReduceMean (Deeploy's rounding) over any axes."""

    inputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        rank = len(x.shape)
        if NodeParser.is_present(node, 1):
            values = ctxt[node.inputs[1].name].values
            if values is None:
                raise NodeMismatch("shape", "axes must be a constant")
            axes = [int(v) % rank for v in np.asarray(values).reshape(-1)]
        else:
            raw = NodeParser.attribute(node, "axes", None)
            axes = [int(v) % rank for v in ([raw] if isinstance(raw, int) else (raw or range(rank)))]
        keep = [axis for axis in range(rank) if axis not in axes]
        reduced = [axis for axis in range(rank) if axis in axes]
        strides = [math.prod(x.shape[axis + 1 :]) for axis in range(rank)]
        count = math.prod(x.shape[axis] for axis in reduced)
        keepdims = int(NodeParser.attribute(node, "keepdims", 1))
        loops_out = "".join(f"for (int32_t k{a} = 0; k{a} < {x.shape[a]}; ++k{a}) " for a in keep)
        loops_in = "".join(f"for (int32_t r{a} = 0; r{a} < {x.shape[a]}; ++r{a}) " for a in reduced)
        offset = " + ".join([f"k{a} * {strides[a]}" for a in keep] + [f"r{a} * {strides[a]}" for a in reduced]) or "0"
        if node.op == "ReduceSum":
            result = "s"
        elif keepdims == 0 and count & (count - 1) == 0:
            shift = count.bit_length() - 1
            result = f"(s + {1 << (shift - 1) if shift else 0}) >> {shift}"
        else:
            result = f"(s + (s >= 0 ? {count // 2} : -{count // 2})) / {count}"
        code = f"""{{
    int32_t out = 0;
    {loops_out}{{
        int64_t s = 0;
        {loops_in}s += {x.c_name}[{offset}];
        {y.c_name}[out++] = ({y.dtype.c_type})({result});
    }}
}}"""
        return {"code": code, "size": x.numel}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "ReduceSum": (integer_mapper(IntegerReduceParser(), "ReduceSum integer"),),
    "ReduceMean": (integer_mapper(IntegerReduceParser(), "ReduceMean integer", ANY),),
}
