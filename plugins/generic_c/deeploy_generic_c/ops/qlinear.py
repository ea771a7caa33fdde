"""Integer-only quantised kernels (fixed-point mode): QLinearConv, QLinearMatMul, QGemm, QLinearAdd/Mul, pooling.

The core's fixed-point lowering turns DequantizeLinear → op → QuantizeLinear
into these operators.  Every kernel accumulates ``(q - zero_point)`` products in
int32 and requantises with integer arithmetic only; scales and zero points
must be constants, they become the multiplier/shift tables in the generated
code.  Two requantisers:

* QLinearConv, QLinearMatMul and QGemm multiply by the float32 scale's 24-bit
  significand and shift, rounding as float32 does
  (:class:`~deeploy_generic_c.kernels.float32_rounding.Float32RoundingRequantiser`):
  bit-exact with ONNX Runtime's fused kernels given the same inputs, so these
  layers add no error that later layers could grow;
* QLinearAdd/Mul and the average pools, whose ONNX Runtime counterparts
  dequantise and sum in float (in an order of its own), requantise the exact
  integer result once with a 31-bit multiplier and a shift (round half to
  even, saturate,
  :class:`~deeploy_generic_c.kernels.qlinear_requantisers.Requantiser`): within one LSB given the same inputs.

Exact mode fuses Conv, MatMul and Gemm islands into the same operators with
the attribute ``requantization="float32"``: the int32 accumulator is then
requantised in float32 as ONNX Runtime's fused kernels do it
(:class:`~deeploy_generic_c.kernels.qlinear_requantisers.FloatRequantiser`), for platforms with an FPU; exact mode's Add, Mul,
average pools and Softmax are in :mod:`~deeploy_generic_c.ops.qlinear_float32`
and :mod:`~deeploy_generic_c.ops.qlinear_softmax`.  Fixed-point mode marks its
nodes ``requantization="tflite"``: Conv/MatMul/Gemm then requantise with
TFLite's integer arithmetic (:mod:`~deeploy_generic_c.kernels.tflite_requantiser`),
the other ops are in :mod:`~deeploy_generic_c.ops.qlinear_tflite`.  Nodes without
the attribute (QOperator files) keep the kernels of this module.

Every fused node may carry ``output_min``/``output_max``: a Relu, Clip or QCDQ
clip the lowering folded into the layer.  Quantisation is monotone, so
clamping the quantised output to those bounds equals running the activation
before quantising; every requantiser takes the clamp as its ``low``/``high``
(:func:`~deeploy_generic_c.parsing.requantising.clamp_requantiser`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.kernels import integer_conv as conv_kernels
from deeploy_generic_c.kernels import dot_rows as dot_rows
from deeploy_generic_c.kernels import matmul_rows as matmul_rows
from deeploy_generic_c.kernels.qlinear_conv import conv_loops
from deeploy_generic_c.parsing.qlinear_operands import (
    any_types,
    quantised_operand,
    quantised_output,
    per_tensor_value,
    binary_layout,
    binary_operands,
    binary_zero_points,
    input_zero_point,
    unary_operands,
)
from deeploy_generic_c.parsing.window import convolution_window, sliding_window
from deeploy_generic_c.kernels.float_bias import float_bias
from deeploy_generic_c.kernels.qlinear_requantisers import Requantiser, fixed_point, zero_table
from deeploy_generic_c.parsing.requantising import (
    RequantisingParser, clamp_requantiser, requantised_mappers, requantization_mode,
)
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.integer_bindings import INLINE


class QLinearConvParser(RequantisingParser):
    """Convolution (1-D/2-D, groups, pads, strides, dilations), per-tensor or per-output-channel weights."""

    inputs = (8, 9)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, x_scale, x_zero = quantised_operand(ctxt, node, 0)
        w, w_scale, w_zero = quantised_operand(ctxt, node, 3)
        y, y_scale, y_zero = quantised_output(ctxt, node, 6)
        win = convolution_window(node, x, w, y)
        group = int(NodeParser.attribute(node, "group", 1))
        cg, mg = win.c // group, win.m // group
        if w_scale.size not in (1, win.m) or w_zero.size not in (1, win.m):
            raise NodeMismatch("shape", f"weight scales/zero points must be per tensor or per output channel ({win.m})")
        bias_buffer = ctxt[node.inputs[8].name] if NodeParser.is_present(node, 8) else None
        requant = self.requantiser(node, x_scale, w_scale, y_scale, y, y_zero, bias_buffer, win.m)
        zx = per_tensor_value(x_zero, "the input zero point")
        bias = "0" if bias_buffer is None or float_bias(bias_buffer) else f"(int32_t){bias_buffer.c_name}[mo]"

        def store(ox: str) -> str:
            return requant.store(f"{y.c_name}[((b * {win.m} + mo) * {win.oh} + oy) * {win.ow} + {ox}]", "acc", "mo")

        macs = win.n * win.m * win.oh * win.ow * cg * win.kh * win.kw
        result = {"macs": macs, "size": y.numel, "requantization": requant.describe(), "scratch": "NULL"}
        if conv_kernels.applies(x, w, ctxt.for_tiles) and not np.any(w_zero):
            # Symmetric weights (TFLite's, most exporters'): the platform's fast integer kernels, which copy
            # x - zx into int16 rows whose padding is 0 -- exactly what the padding contributes here.
            ops = conv_kernels.ConvOperands(x, w, y, win, group, lambda mo: bias.replace("[mo]", f"[{mo}]"),
                                            requant.store, x_zero=zx)
            code = "{\n" + requant.declarations() + "\n" + conv_kernels.kernel(ops) + "\n}"
            return {**result, "code": code, "scratch_bytes": conv_kernels.scratch_bytes(ops),
                    "conv_kernel": conv_kernels.kind(ops)}
        code = "{\n" + requant.declarations() + "\n" + conv_loops(win, cg, mg, x, w, w_zero, zx, bias, store) + "\n}"
        return {**result, "code": code, "scratch_bytes": 0}





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


def _without_requantization(node: gs.Node) -> None:
    """This module's Add/Mul/pool kernels serve nodes without the attribute (QOperator files) only."""
    mode = requantization_mode(node)
    if mode is not None:
        raise NodeMismatch("attribute", f"requantization={mode!r} has its own kernel; this one serves QOperator "
                                        "nodes without the attribute")


class QLinearBinaryParser(NodeParser):
    """com.microsoft QLinearAdd / QLinearMul with numpy broadcasting (per-tensor parameters)."""

    inputs = (7, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        _without_requantization(node)
        (a, a_scale, a_zero), (b, b_scale, b_zero), (y, y_scale, y_zero) = binary_operands(ctxt, node)
        za, zb = binary_zero_points(a_zero, b_zero)
        shape, strides = binary_layout(a, b, y)
        qa, qb = f"((int32_t){a.c_name}[o0] - {za})", f"((int32_t){b.c_name}[o1] - {zb})"
        if node.op == "QLinearMul":
            requant = clamp_requantiser(Requantiser.from_scales(np.array([a_scale[0] * b_scale[0] / y_scale]), y, y_zero),
                                        node)
            body = requant.store(f"{y.c_name}[y]", f"{qa} * {qb}", "0")
        else:
            # Both operands on one shift: the larger ratio gets 31 significant bits.
            ratios = (a_scale[0] / y_scale, b_scale[0] / y_scale)
            _, shift = fixed_point(max(ratios))
            scaled = [round(ratio * 2**shift) for ratio in ratios]
            requant = clamp_requantiser(Requantiser([1], [shift], y, y_zero), node)
            requant.extra = {"input_multipliers": scaled}
            body = requant.store(f"{y.c_name}[y]", f"(int64_t){qa} * {scaled[0]} + (int64_t){qb} * {scaled[1]}", "0")
        return {"code": "{\n" + requant.declarations() + "\n" + offset_loops(shape, strides, body) + "\n}",
                "size": y.numel * 2, "requantization": requant.describe()}


class QLinearAveragePoolParser(NodeParser):
    """com.microsoft QLinearAveragePool / QLinearGlobalAveragePool: every window counts its full area."""

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        _without_requantization(node)
        clamp_node = node
        (x, x_scale, x_zero), (y, y_scale, y_zero) = unary_operands(ctxt, node)
        zx = input_zero_point(x_zero)
        if node.op == "QLinearGlobalAveragePool":
            kernel = list(x.shape[2:])
            node = gs.Node("AveragePool", attrs={"kernel_shape": kernel}, inputs=node.inputs, outputs=node.outputs)
        else:
            kernel = [int(v) for v in NodeParser.attribute(node, "kernel_shape")]
        win = sliding_window(node, x, y, kernel, "pooling")
        # The window's padding includes what auto_pad SAME_* resolves to, not only the pads attribute.
        if int(NodeParser.attribute(node, "ceil_mode", 0)) or (any(win.pads) and not int(NodeParser.attribute(node, "count_include_pad", 0))):
            raise NodeMismatch("attribute", "ceil_mode=1 or padding excluded from the count is not supported")
        area = win.kh * win.kw
        requant = clamp_requantiser(Requantiser.from_scales(np.array([x_scale[0] / (y_scale * area)]), y, y_zero),
                                    clamp_node)
        planes = win.n * win.c
        code = f"""{{
{requant.declarations()}
for (int32_t p = 0; p < {planes}; ++p) {{
    for (int32_t oy = 0; oy < {win.oh}; ++oy) {{
        for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
            int32_t acc = 0;
            for (int32_t ky = 0; ky < {win.kh}; ++ky) {{
                const int32_t iy = oy * {win.stride_h} - {win.pad_top} + ky * {win.dil_h};
                if (iy < 0 || iy >= {win.h}) continue;
                for (int32_t kx = 0; kx < {win.kw}; ++kx) {{
                    const int32_t ix = ox * {win.stride_w} - {win.pad_left} + kx * {win.dil_w};
                    if (ix < 0 || ix >= {win.w}) continue;
                    acc += (int32_t){x.c_name}[(p * {win.h} + iy) * {win.w} + ix] - {zx};
                }}
            }}
            {requant.store(f"{y.c_name}[(p * {win.oh} + oy) * {win.ow} + ox]", "acc", "0")}
        }}
    }}
}}
}}"""
        return {"code": code, "size": y.numel * area, "requantization": requant.describe()}



MAPPERS = {
    "QLinearConv": requantised_mappers(QLinearConvParser, 9, "QLinearConv", scratch=True),
    "QLinearMatMul": requantised_mappers(QLinearMatMulParser, 8, "QLinearMatMul"),
    "com.microsoft.QGemm": requantised_mappers(QGemmParser, 9, "QGemm"),
    "com.microsoft.QLinearAdd": single_binding(QLinearBinaryParser(), any_types(8), "QLinearAdd fixed-point", INLINE),
    "com.microsoft.QLinearMul": single_binding(QLinearBinaryParser(), any_types(8), "QLinearMul fixed-point", INLINE),
    "com.microsoft.QLinearAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearAveragePool fixed-point", INLINE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearGlobalAveragePool fixed-point", INLINE),
}
