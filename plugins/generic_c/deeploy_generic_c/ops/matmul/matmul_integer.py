"""ONNX's ``MatMulInteger``: ``(A - a_zero_point) @ (B - b_zero_point)`` accumulated in int32.

A and B are int8 or uint8 (any mix), their zero points of the same type: one
value for the tensor, one per row of A (``[M]``, or ``[..., M, 1]`` with no
batch dependence) or one per column of B (``[N]``, ``[..., 1, N]``); batch
dimensions broadcast as in numpy's matmul.  Deeploy's Generic platform maps
the op as an alias of integer MatMul without zero points (semantics §8); the
front end turns such float-declared QuantLib nodes into ``MatMul`` before
onnx's checker (``deeploy_core.frontend.matmul_integer_alias``), so they reach
the integer MatMul kernel.  The loop is emitted inline with the operands' exact
C types, like the other integer kernels, and every product is exact in int32
(|a - za|, |b - zb| ≤ 255).
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.integer_bindings import INLINE


def _zero_point(node: gs.Node, ctxt: NetworkContext, index: int, count: int, vector_shapes: tuple[tuple[int, ...], ...],
                loop: str, what: str) -> str:
    """The C expression of a zero point inside the loops: ``0`` (absent), element 0 (scalar) or element ``loop``.

    ``vector_shapes`` are the shapes (leading ones dropped) that mean one value per row/column; any other shape
    would make the zero point depend on the batch, which ONNX allows but no exporter writes.
    """
    if not NodeParser.is_present(node, index):
        return "0"
    buffer = ctxt[node.inputs[index].name]
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}, MatMulInteger takes an integer zero point",
                           wants_integer=(buffer.name,))
    if buffer.numel == 1:
        return f"(int32_t){buffer.c_name}[0]"
    core = tuple(buffer.shape)
    while core and core[0] == 1:
        core = core[1:]
    if buffer.numel != count or core not in vector_shapes:
        raise NodeMismatch("shape", f"{what} has shape {list(buffer.shape)}; MatMulInteger takes one value or one "
                                    f"per {'row of A' if loop == 'i' else 'column of B'} ({count})")
    return f"(int32_t){buffer.c_name}[{loop}]"


def _operand(buffer: Buffer, what: str) -> None:
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}, MatMulInteger takes int8 or uint8",
                           wants_integer=(buffer.name,))
    if len(buffer.shape) < 2:
        raise NodeMismatch("shape", f"{what} is 1-D; the integer kernel takes operands of rank 2 or more")


class MatMulIntegerParser(NodeParser):
    """numpy matmul of (A - a_zero_point) and (B - b_zero_point), zero points per tensor, row of A or column of B."""

    inputs = (2, 4)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        _operand(a, "input A")
        _operand(b, "input B")
        m, k = a.shape[-2:]
        n = b.shape[-1]
        za = _zero_point(node, ctxt, 2, m, ((m,), (m, 1)), "i", "a_zero_point")
        zb = _zero_point(node, ctxt, 3, n, ((n,),), "j", "b_zero_point")
        batch = tuple(y.shape[:-2]) or (1,)
        shape, (a_strides, b_strides) = collapse_broadcast(
            batch, [broadcast_strides(a.shape[:-2], batch), broadcast_strides(b.shape[:-2], batch)]
        )
        body = f"""for (int32_t i = 0; i < {m}; ++i) {{
    const int32_t za = {za};
    for (int32_t j = 0; j < {n}; ++j) {{
        const int32_t zb = {zb};
        int32_t acc = 0;
        for (int32_t kk = 0; kk < {k}; ++kk)
            acc += ((int32_t){a.c_name}[o0 * {m * k} + i * {k} + kk] - za)
                 * ((int32_t){b.c_name}[o1 * {k * n} + kk * {n} + j] - zb);
        {y.c_name}[y * {m * n} + i * {n} + j] = ({y.dtype.c_type})acc;
    }}
}}"""
        return {"code": offset_loops(shape, [a_strides, b_strides], body), "macs": math.prod(batch) * m * n * k,
                "size": y.numel}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MatMulInteger": (NodeMapper(MatMulIntegerParser(),
                                 (NodeBinding(NodeTypeChecker((None, None, None, None), (dtypes.INT32,)), INLINE),),
                                 name="MatMulInteger integer"),),
}
