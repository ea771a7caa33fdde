"""Integer kernels in the raw integer domain (Deeploy's integer dialect and integer versions of ONNX ops).

Conv, Gemm/MatMul, MaxPool, iSoftmax and Add/Sub/Mul have their own families (:mod:`deeploy_generic_c.ops.conv`,
:mod:`deeploy_generic_c.ops.matmul`, :mod:`deeploy_generic_c.ops.pooling`, :mod:`deeploy_generic_c.ops.softmax`,
:mod:`deeploy_generic_c.ops.elementwise.integer`); this module keeps RequantShift and the integer ReduceSum/ReduceMean
until their families are made.

The loops are emitted inline with the exact C types of their operands, so one
template serves every combination of int8/uint8/int16/int32 inputs; all
arithmetic is promoted to int32 (int64 where a product could overflow), as
``deeploy-op-semantics.md`` specifies.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.requantisation import Requantisation
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper, require_integer_operand


class RequantShiftParser(NodeParser):
    """y = clamp((x*mul + add + 2^(s-1)) >> s); mul/add scalar or per channel along axis 1."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        channels = x.shape[1] if len(x.shape) > 1 else 1
        requant = Requantisation(node, ctxt, node.inputs[1].name, node.inputs[2].name, channels)
        outer = x.shape[0] if len(x.shape) > 1 else 1
        inner = math.prod(x.shape[2:]) if len(x.shape) > 1 else x.numel
        store = requant.store(f"{y.c_name}[base + i]", y.dtype.c_type, f"{x.c_name}[base + i]", "c")
        code = f"""for (int32_t n = 0; n < {outer}; ++n) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        const int32_t base = (n * {channels} + c) * {inner};
        for (int32_t i = 0; i < {inner}; ++i) {store}
    }}
}}"""
        return {"code": code, "size": x.numel * 3, "requantization": requant.describe()}


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
    "RequantShift": (integer_mapper(RequantShiftParser(), "RequantShift integer", ANY),),
    "ReduceSum": (integer_mapper(IntegerReduceParser(), "ReduceSum integer"),),
    "ReduceMean": (integer_mapper(IntegerReduceParser(), "ReduceMean integer", ANY),),
}
