"""Matrix products (float32): Gemm and MatMul, small ones written into the layer, the rest through the runtime."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import broadcast_strides, c_float, int_array, single_binding
from deeploy_generic_c.kernels.loops import SMALL_PRODUCT_MACS, gemm_loop, matmul_loop

INLINE_PRODUCT_MACS = 32768
"""MatMuls with a multiple of 8 columns up to this many multiply-accumulates are loops in the layer too (beyond
SMALL_PRODUCT_MACS): their blocks of two 4-float vector accumulators (kernels/loops.py) stay in registers, run about as
fast as the blocked kernel's packing and tiles on operands this small (CCT_1_16_16_8's attention products,
64 x 64 x 8 and 64 x 8 x 64: the network went from 1.24x to 1.23x of 080000f with gcc, 1.31x to 1.33x with
clang) and cost ~150 bytes of code each instead of linking the ~4.6 KB blocked GEMM."""


def inline_product(macs: int, n: int) -> bool:
    """Whether a float MatMul of ``macs`` multiply-accumulates and ``n`` output columns is written in the layer."""
    return macs <= SMALL_PRODUCT_MACS or (n % 8 == 0 and macs <= INLINE_PRODUCT_MACS)


class GemmParser(NodeParser):
    """transA/transB, alpha, beta, optional C broadcast over rows or columns."""

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        trans_a, trans_b = int(NodeParser.attribute(node, "transA", 0)), int(NodeParser.attribute(node, "transB", 0))
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        n = b.shape[0] if trans_b else b.shape[1]
        c_name, rows, cols = "NULL", 1, 1
        if NodeParser.is_present(node, 2):
            c = ctxt[node.inputs[2].name]
            shape = (1,) * (2 - len(c.shape)) + tuple(c.shape)
            rows, cols = shape
            if rows not in (1, m) or cols not in (1, n):
                raise NodeMismatch("shape", f"C of shape {c.shape} does not broadcast to [{m}, {n}]")
            c_name = c.c_name
        alpha, beta = float(NodeParser.attribute(node, "alpha", 1.0)), float(NodeParser.attribute(node, "beta", 1.0))
        if m * n * k <= SMALL_PRODUCT_MACS:
            c_used = c_name if c_name != "NULL" and beta != 0.0 else None
            return {"call": gemm_loop(a.c_name, b.c_name, c_used, y.c_name, m, n, k, bool(trans_a), bool(trans_b),
                                      alpha, beta, rows, cols), "macs": m * n * k, "size": y.numel}
        return {
            "call": (
                f"dcg_gemm_f32({a.c_name}, {b.c_name}, {c_name}, {y.c_name}, {m}, {n}, {k}, {trans_a}, {trans_b}, "
                f"{c_float(alpha)}, {c_float(beta)}, {rows}, {cols});"
            ),
            "macs": m * n * k, "size": y.numel,
        }


class MatMulParser(NodeParser):
    """numpy matmul semantics: 1-D operands promoted, batch dimensions broadcast."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        a_shape = (1, *a.shape) if len(a.shape) == 1 else tuple(a.shape)
        b_shape = (*b.shape, 1) if len(b.shape) == 1 else tuple(b.shape)
        m, k = a_shape[-2:]
        n = b_shape[-1]
        batch = tuple(int(d) for d in _broadcast_shape(a_shape[:-2], b_shape[:-2]))
        a_strides = broadcast_strides(a_shape[:-2], batch)
        b_strides = broadcast_strides(b_shape[:-2], batch)
        if inline_product(math.prod(batch) * m * n * k, n):
            return {"call": matmul_loop(a.c_name, b.c_name, y.c_name, m, n, k, batch, a_strides, b_strides),
                    "macs": math.prod(batch) * m * n * k, "size": y.numel}
        return {
            "call": (
                f"dcg_matmul_f32({a.c_name}, {b.c_name}, {y.c_name}, {m}, {n}, {k}, {len(batch)}, "
                f"{int_array(batch)}, {int_array(a_strides)}, {int_array(b_strides)});"
            ),
            "macs": math.prod(batch) * m * n * k, "size": y.numel,
        }


def _broadcast_shape(first: tuple[int, ...], second: tuple[int, ...]) -> list[int]:
    rank = max(len(first), len(second))
    a = (1,) * (rank - len(first)) + first
    b = (1,) * (rank - len(second)) + second
    out = []
    for x, z in zip(a, b):
        if x != z and 1 not in (x, z):
            raise NodeMismatch("shape", f"batch dimensions {first} and {second} do not broadcast")
        out.append(max(x, z))
    return out


F32 = dtypes.FLOAT32
THREE_FLOATS = NodeTypeChecker((F32, F32, F32), (F32,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Gemm": single_binding(GemmParser(), THREE_FLOATS, "Gemm float32"),
    "MatMul": single_binding(MatMulParser(), NodeTypeChecker((F32, F32), (F32,)), "MatMul float32"),
}
