"""QOperator matrix products: ONNX's QLinearMatMul and com.microsoft's QGemm, in each requantisation arithmetic.

Both accumulate ``(a - za)(b - zb)`` in int32 and requantise once per output with the arithmetic the node's
``requantization`` attribute names (:mod:`deeploy_generic_c.parsing.requantising`): ONNX Runtime's float32
rounding in integers (QOperator files, no attribute), float32 (exact mode) or TFLite's (fixed-point mode).
With constant symmetric B they reuse the integer family's fast products (``matmul_rows``, ``dot_rows``);
otherwise a loop in the layer, in blocks of columns when B is stored [K, N].  Scales and zero points must be
constants: they become the tables in the generated code.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels import dot_rows as dot_rows
from deeploy_generic_c.kernels import matmul_rows as matmul_rows
from deeploy_generic_c.kernels.float_bias import float_bias
from deeploy_generic_c.kernels.qlinear_requantisers import zero_table
from deeploy_generic_c.parsing.qlinear_operands import per_tensor_value, quantised_operand, quantised_output
from deeploy_generic_c.parsing.requantising import RequantisingParser, requantised_mappers


COLUMN_BLOCK = 16
"""Columns of a MatMul with B stored [K, N] computed together: one A value times a contiguous run of B's row."""


def _column_blocks(element: str, b_value: str, b_zero: np.ndarray, zb: str, bias: str, k: int, n: int,
                   store: str) -> str:
    """Blocks of :data:`COLUMN_BLOCK` outputs of row ``i`` up to the last multiple of it (the caller does the rest).

    ``Σ_k (a - za)(b - zb) = Σ_k (a - za) b - zb Σ_k (a - za)``: the same int32,
    with B read along its rows, a fixed-length loop compilers vectorise.
    """
    row_sum = ""
    correction = ""
    if np.any(b_zero):
        row_sum = f"int32_t row_sum = 0;\n        for (int32_t kk = 0; kk < {k}; ++kk) row_sum += {element};"
        correction = f" - zb * row_sum"
    return f"""{row_sum}
        for (int32_t jb = 0; jb + {COLUMN_BLOCK} <= {n}; jb += {COLUMN_BLOCK}) {{
            int32_t sums[{COLUMN_BLOCK}] = {{0}};
            for (int32_t kk = 0; kk < {k}; ++kk) {{
                const int16_t av = (int16_t){element};
                for (int32_t jj = 0; jj < {COLUMN_BLOCK}; ++jj) sums[jj] += av * (int16_t){b_value};
            }}
            for (int32_t jj = 0; jj < {COLUMN_BLOCK}; ++jj) {{
                const int32_t j = jb + jj;
                const int32_t zb = {zb};
                const int32_t acc = {bias} + sums[jj]{correction};
                (void)zb;
                {store}
            }}
        }}"""


class _MatMulLike(RequantisingParser):
    """``y[b, i, j] = requant(bias[j] + Σ_k (a[b, i, k] - za) (B[b, k, j] - zb[j]))``."""

    def _emit(self, node: gs.Node, ctxt: NetworkContext, trans_b: bool, bias: str | None, y_scale_index: int,
              float_bias_buffer: Buffer | None = None) -> OperatorRepresentation:
        a, a_scale, a_zero = quantised_operand(ctxt, node, 0)
        b, b_scale, b_zero = quantised_operand(ctxt, node, 3)
        y, y_scale, y_zero = quantised_output(ctxt, node, y_scale_index)
        if len(a.shape) < 2 or len(b.shape) < 2:
            raise NodeMismatch("shape", "both operands need at least two dimensions")
        m, k = a.shape[-2:]
        n = b.shape[-2] if trans_b else b.shape[-1]
        batch = math.prod(y.shape[:-2])
        a_batched = math.prod(a.shape[:-2]) == batch and batch > 1
        b_batched = math.prod(b.shape[:-2]) > 1
        if (math.prod(a.shape[:-2]) not in (1, batch)) or (b_batched and math.prod(b.shape[:-2]) != batch):
            raise NodeMismatch("shape", "batch dimensions must match or B must be 2-D")
        if b_scale.size not in (1, n) or b_zero.size not in (1, n):
            raise NodeMismatch("shape", f"B's scales/zero points must be per tensor or per column ({n})")
        requant = self.requantiser(node, a_scale, b_scale, y_scale, y, y_zero, float_bias_buffer, n)
        za = per_tensor_value(a_zero, "A's zero point")
        b_index = "j * {k} + kk".format(k=k) if trans_b else f"kk * {n} + j"
        a_offset = f"bt * {m * k} + " if a_batched else ""
        b_offset = f"bt * {k * n} + " if b_batched else ""
        fast = self._fast_product(ctxt, a, b, b_zero, za, m, n, k, trans_b, bias, requant, y,
                                  batch == 1 and not a_batched and not b_batched)
        if fast is not None:
            return {"code": fast, "macs": batch * m * n * k, "size": y.numel, "requantization": requant.describe()}
        zb = "b_zero[j]" if b_zero.size > 1 else "b_zero[0]"
        element = f"((int32_t){a.c_name}[{a_offset}i * {k} + kk] - {za})"
        store = requant.store(f"{y.c_name}[(bt * {m} + i) * {n} + j]", "acc", "j")
        blocks = "" if trans_b or n < COLUMN_BLOCK else _column_blocks(
            element, f"{b.c_name}[{b_offset}kk * {n} + jb + jj]", b_zero, zb, bias or "0", k, n, store)
        # The blocks end at a constant column; a tail loop that can never run is not emitted (gcc warns that its
        # iterations would read past B).
        tail_start = 0 if not blocks else n - n % COLUMN_BLOCK
        tail = "" if tail_start == n else f"""for (int32_t j = {tail_start}; j < {n}; ++j) {{
            const int32_t zb = {zb};
            int32_t acc = {bias or "0"};
            for (int32_t kk = 0; kk < {k}; ++kk)
                acc += {element} * ((int32_t){b.c_name}[{b_offset}{b_index}] - zb);
            {store}
        }}"""
        code = f"""{{
{requant.declarations()}
{zero_table("b_zero", b_zero)}
for (int32_t bt = 0; bt < {batch}; ++bt) {{
    for (int32_t i = 0; i < {m}; ++i) {{
        {blocks}
        {tail}
    }}
}}
}}"""
        return {"code": code, "macs": batch * m * n * k, "size": y.numel, "requantization": requant.describe()}


    @staticmethod
    def _fast_product(ctxt: NetworkContext, a: Buffer, b: Buffer, b_zero: np.ndarray, za: int, m: int, n: int, k: int,
                      trans_b: bool, bias: str | None, requant: Any, y: Buffer, single: bool) -> str | None:
        """The platform's fast integer products (``_matmul_rows``, ``_dot_rows``) for constant symmetric B.

        ``Σ_k (a - za) b = Σ_k a b - za Σ_k b``: the kernels compute the plain
        integer product and the epilogue subtracts ``za`` times B's column sum
        (a constant), so the int32 accumulator is the same.  None when they do
        not apply (tiled builds, batches, B computed at run time or with zero
        points): the loops then run.
        """
        if not single or b.values is None or np.any(b_zero):
            return None
        row = not trans_b and matmul_rows.applies(a, b, ctxt.for_tiles)
        dot = trans_b and dot_rows.applies(a, b, k, ctxt.for_tiles)
        if not (row or dot):
            return None
        values = np.asarray(b.values, np.int64).reshape((n, k) if trans_b else (k, n))
        column_sums = values.sum(axis=1 if trans_b else 0)
        table = zero_table("b_column_sum", column_sums) if za else ""

        def store(target: str, acc: str, i: str, j: str) -> str:
            total = f"{acc} + {(bias or '0').replace('[j]', f'[{j}]')}" + (f" - {za} * b_column_sum[{j}]" if za else "")
            return requant.store(target, f"({total})", j)

        kernel = (matmul_rows.kernel(matmul_rows.MatrixProduct(m, n, k, a, b, y, "0", "0", "0", False, store)) if row
                  else dot_rows.kernel(dot_rows.RowDotProduct(m, n, k, a, b, y, store)))
        return "{\n" + requant.declarations() + "\n" + table + "\n" + kernel + "\n}"


class QLinearMatMulParser(_MatMulLike):
    """MatMul of two quantised tensors (batched; B per tensor or per column)."""

    inputs = (8, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        return self._emit(node, ctxt, trans_b=False, bias=None, y_scale_index=6)


class QGemmParser(_MatMulLike):
    """com.microsoft QGemm: ``A · op(B) + C`` with an int32 bias C already in the scale of A·B."""

    inputs = (9, 9)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        if int(NodeParser.attribute(node, "transA", 0)) or float(NodeParser.attribute(node, "alpha", 1.0)) != 1.0:
            raise NodeMismatch("attribute", "transA=1 or alpha≠1 is not supported")
        bias, float_bias_buffer = None, None
        if NodeParser.is_present(node, 6):
            c = ctxt[node.inputs[6].name]
            if c.numel not in (1, node.outputs[0].shape[-1]):
                raise NodeMismatch("shape", "the bias must be a vector over the output columns")
            if float_bias(c):
                float_bias_buffer = c
            else:
                bias = f"(int32_t){c.c_name}[{'j' if c.numel > 1 else '0'}]"
        return self._emit(node, ctxt, trans_b=bool(int(NodeParser.attribute(node, "transB", 0))), bias=bias, y_scale_index=7,
                          float_bias_buffer=float_bias_buffer)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "QLinearMatMul": requantised_mappers(QLinearMatMulParser, 8, "QLinearMatMul"),
    "com.microsoft.QGemm": requantised_mappers(QGemmParser, 9, "QGemm"),
}
"""Op type -> mappers: fixed-point (no attribute), then float32, then TFLite requantisation."""
