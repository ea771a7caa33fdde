"""Integer Gemm and MatMul in the raw integer domain (int32 out), fused with their RequantShift, and Deeploy's RQ forms.

8/16-bit operands take the fast kernels of :mod:`deeploy_generic_c.kernels.matmul_rows` (B stored [K, N]) and
:mod:`deeploy_generic_c.kernels.dot_rows` (B transposed); any other layer is a loop written into the layer with
the operands' exact C types, all arithmetic promoted to int32 as ``deeploy-op-semantics.md`` specifies.

``RequantizedGemm``/``RequantizedMatMul`` are the forms this platform's own lowering fuses ``Gemm/MatMul →
RequantShift`` into (mul before add).  Deeploy's PULP and Siracusa targets fuse the same into
``RQGemm(A, B, [C], add, mul)`` and ``RQMatMul(A, B, add, mul)``: the RequantShift's attributes (``div``,
``n_levels``/``n_levels_out``, ``signed``) move onto the fused node and its ``add`` input comes *before*
``mul``.  ``deeploy-op-semantics.md`` §8 gives their meaning as the unfused integer op (§3) followed by
RequantShift (§2), so they run on the same kernels, reading mul and add from their positions.  Deeploy has no
test data for either op, so the arithmetic is the written one (unverified against a peer).
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation,
)
from deeploy_generic_c.kernels import dot_rows as dot_rows
from deeploy_generic_c.kernels import matmul_rows as matmul_rows
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.kernels.requantisation import Requantisation, restrict_parameters
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE, integer_mapper, require_integer_operand


class IntegerGemmParser(NodeParser):
    """Y = alpha*op(A)@op(B) + beta*C over integers (alpha, beta as integers), int32 out."""

    inputs = (2, 3)
    requantised = False
    requant_inputs: tuple[int, int] = (-2, -1)
    """Positions of the requantisation's (mul, add) inputs; Deeploy's RQGemm/RQMatMul put add first."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = list(node.inputs[:-2]) if self.requantised else list(node.inputs)
        a, b, y = ctxt[operands[0].name], ctxt[operands[1].name], ctxt[node.outputs[0].name]
        require_integer_operand(a, "input A")
        require_integer_operand(b, "input B")
        trans_a, trans_b = int(NodeParser.attribute(node, "transA", 0)), int(NodeParser.attribute(node, "transB", 0))
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        n = b.shape[0] if trans_b else b.shape[1]
        alpha, beta = int(NodeParser.attribute(node, "alpha", 1.0)), int(NodeParser.attribute(node, "beta", 1.0))
        a_index = f"kk * {m} + i" if trans_a else f"i * {k} + kk"
        b_index = f"j * {k} + kk" if trans_b else f"kk * {n} + j"
        cbuf = ctxt[operands[2].name] if len(operands) > 2 and operands[2].name else None

        def bias_of(i: str, j: str, name: str | None = None) -> str:
            """beta * C[i, j] with C broadcast over rows and/or columns (C read through ``name`` if given)."""
            if cbuf is None:
                return "0"
            rows, cols = ((1,) * (2 - len(cbuf.shape)) + tuple(cbuf.shape))[-2:]
            return (f"{beta} * (int32_t){name or cbuf.c_name}"
                    f"[{i if rows != 1 else '0'} * {cols} + {j if cols != 1 else '0'}]")

        bias = bias_of("i", "j")
        target = f"{y.c_name}[i * {n} + j]"
        requant = None
        if self.requantised:
            mul, add = self.requant_inputs
            requant = Requantisation(node, ctxt, node.inputs[mul].name, node.inputs[add].name, n)
        extra: dict[str, object] = {"requantization": requant.describe()} if requant is not None else {}
        row_product = not trans_b and matmul_rows.applies(a, b, ctxt.for_tiles)
        row_dot = trans_b and not trans_a and dot_rows.applies(a, b, k, ctxt.for_tiles)
        if row_product or row_dot:
            c_max = matmul_rows.largest_value(cbuf)
            bound = (None if c_max is None else
                     abs(alpha) * matmul_rows.product_bound(a, b, k) + abs(beta) * c_max)

            def fast_store(target: str, acc: str, i: str, j: str) -> str:
                """The epilogue both fast kernels write per output: alpha, bias, then requantise or cast."""
                total = f"{alpha} * {acc} + {bias_of(i, j, 'dc_bias')}"
                if requant is None:
                    return f"{target} = ({y.dtype.c_type})({total});"
                return requant.store(target, y.dtype.c_type, total, j, bound, Requantisation.RESTRICT_NAMES)

            parameters = restrict_parameters(requant, cbuf)
            if row_product:
                product = matmul_rows.MatrixProduct(m, n, k, a, b, y, "0", "0", "0", bool(trans_a), fast_store,
                                                    parameters)
                code, kind = matmul_rows.kernel(product), product.kind
            else:
                code, kind = dot_rows.kernel(dot_rows.RowDotProduct(m, n, k, a, b, y, fast_store, parameters)), "row_dot"
            return {"code": code, "matmul_kernel": kind, "macs": m * n * k, "size": y.numel, **extra}
        if requant is not None:
            store = requant.store(target, y.dtype.c_type, f"{alpha} * acc + {bias}", "j")
        else:
            store = f"{target} = ({y.dtype.c_type})({alpha} * acc + {bias});"
        code = f"""for (int32_t i = 0; i < {m}; ++i) {{
    for (int32_t j = 0; j < {n}; ++j) {{
        int32_t acc = 0;
        for (int32_t kk = 0; kk < {k}; ++kk) acc += (int32_t){a.c_name}[{a_index}] * (int32_t){b.c_name}[{b_index}];
        {store}
    }}
}}"""
        return {"code": code, "macs": m * n * k, "size": y.numel, **extra}


class IntegerMatMulParser(NodeParser):
    """numpy matmul over integers with broadcast batch dimensions, int32 out."""

    inputs = (2, 2)
    requantised = False
    requant_inputs: tuple[int, int] = (-2, -1)
    """Positions of the requantisation's (mul, add) inputs (see :class:`IntegerGemmParser`)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = list(node.inputs[:-2]) if self.requantised else list(node.inputs)
        a, b, y = ctxt[operands[0].name], ctxt[operands[1].name], ctxt[node.outputs[0].name]
        require_integer_operand(a, "input A")
        require_integer_operand(b, "input B")
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise NodeMismatch("shape", "1-D integer MatMul operands are not supported")
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = tuple(y.shape[:-2])
        shape, (a_strides, b_strides) = collapse_broadcast(
            batch or (1,), [broadcast_strides(a.shape[:-2], batch or (1,)), broadcast_strides(b.shape[:-2], batch or (1,))]
        )
        bias = "0"
        bias_buffer = ctxt[operands[2].name] if len(operands) > 2 else None
        if bias_buffer is not None:
            if bias_buffer.numel not in (1, n):
                raise NodeMismatch("shape", f"bias has {bias_buffer.numel} values; expected 1 or {n}")
            bias = f"(int32_t){bias_buffer.c_name}[{'j' if bias_buffer.numel > 1 else '0'}]"
        target = f"{y.c_name}[y * {m * n} + i * {n} + j]"
        requant, channel = None, "j"
        if self.requantised:
            rank = len(y.shape)
            if rank == 2:
                channel, channels = "j", n
            elif rank == 3:
                channel, channels = "i", m
            else:  # axis 1 is a batch dimension; y counts batches in C order
                channel, channels = f"((y / {math.prod(batch[2:])}) % {batch[1]})", batch[1]
            mul, add = self.requant_inputs
            requant = Requantisation(node, ctxt, node.inputs[mul].name, node.inputs[add].name, channels)
        extra: dict[str, object] = {"requantization": requant.describe()} if requant is not None else {}
        macs = math.prod(batch) * m * n * k
        if matmul_rows.applies(a, b, ctxt.for_tiles):
            bias_max = matmul_rows.largest_value(bias_buffer)
            bound = None if bias_max is None else matmul_rows.product_bound(a, b, k) + bias_max

            def matmul_store(target: str, acc: str, i: str, j: str) -> str:
                if bias_buffer is not None:
                    acc = f"{acc} + (int32_t)dc_bias[{j if bias_buffer.numel > 1 else '0'}]"
                if requant is None:
                    return f"{target} = ({y.dtype.c_type})({acc});"
                return requant.store(target, y.dtype.c_type, acc, {"i": i, "j": j}.get(channel, channel), bound,
                                     Requantisation.RESTRICT_NAMES)

            product = matmul_rows.MatrixProduct(m, n, k, a, b, y, f"o0 * {m * k}", f"o1 * {k * n}", f"y * {m * n}",
                                                False, matmul_store, restrict_parameters(requant, bias_buffer))
            return {"code": offset_loops(shape, [a_strides, b_strides], matmul_rows.kernel(product)),
                    "matmul_kernel": product.kind, "macs": macs, "size": y.numel, **extra}
        if requant is not None:
            store = requant.store(target, y.dtype.c_type, "acc", channel)
        else:
            store = f"{target} = ({y.dtype.c_type})acc;"
        body = f"""for (int32_t i = 0; i < {m}; ++i) {{
    for (int32_t j = 0; j < {n}; ++j) {{
        int32_t acc = {bias};
        for (int32_t kk = 0; kk < {k}; ++kk)
            acc += (int32_t){a.c_name}[o0 * {m * k} + i * {k} + kk] * (int32_t){b.c_name}[o1 * {k * n} + kk * {n} + j];
        {store}
    }}
}}"""
        return {"code": offset_loops(shape, [a_strides, b_strides], body), "macs": macs, "size": y.numel, **extra}


class RequantizedGemmParser(IntegerGemmParser):
    """Gemm fused with its RequantShift (inputs: A, B, [C], mul, add)."""

    inputs = (4, 5)
    requantised = True


class RequantizedMatMulParser(IntegerMatMulParser):
    """MatMul (+ bias Add) fused with its RequantShift (inputs: A, B, [bias], mul, add)."""

    inputs = (4, 5)
    requantised = True


class RQGemmParser(RequantizedGemmParser):
    """Deeploy's RQGemm: inputs A, B, [C], add, mul; Gemm attributes plus RequantShift's."""

    requant_inputs = (-1, -2)


class RQMatMulParser(RequantizedMatMulParser):
    """Deeploy's RQMatMul: inputs A, B, add, mul (no bias); RequantShift's attributes."""

    inputs = (4, 4)
    requant_inputs = (-1, -2)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Gemm": (integer_mapper(IntegerGemmParser(), "Gemm integer"),),
    "MatMul": (integer_mapper(IntegerMatMulParser(), "MatMul integer"),),
    "RequantizedGemm": (integer_mapper(RequantizedGemmParser(), "Gemm + RequantShift integer", ANY),),
    "RequantizedMatMul": (integer_mapper(RequantizedMatMulParser(), "MatMul + RequantShift integer", ANY),),
    "RQGemm": (NodeMapper(RQGemmParser(), (NodeBinding(ANY, INLINE),), name="RQGemm integer"),),
    "RQMatMul": (NodeMapper(RQMatMulParser(), (NodeBinding(ANY, INLINE),), name="RQMatMul integer"),),
}
