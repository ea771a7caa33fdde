"""Exact mode's com.microsoft.QLinearSoftmax: ONNX Runtime's DequantizeLinear → Softmax → QuantizeLinear.

ONNX Runtime's float Softmax (MLAS ``MlasComputeSoftmax``) works row by row
along the softmax axis: the row maximum, then ``e_i = exp(x_i - max)`` with
its own exp approximation while summing the ``e_i``, then ``e_i · (1 / sum)``
(one division, then a product per element, not a division per element).
On x86-64 with AVX2 and FMA3 (``MlasComputeSumExpF32KernelFma3``) the sum
runs in eight lanes (lane ``j`` takes elements ``j, j+8, …`` in order),
reduced as ``((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7))``, and exp is

    t = max(x - max, -88.3762626647949)
    b = fma(t, log2(e), 1.5 · 2^23)        # m = round(t / ln 2) in b's low bits
    m = b - 1.5 · 2^23
    t = fma(m, -ln2_high, t); t = fma(m, -ln2_low, t)
    p = Horner polynomial of degree 6 in t, every step an fma
    e = p · 2^m                            # 2^m from b's bits: (bits(b) << 23) + bits(1.0)

This kernel computes exactly those steps, with C99's ``fmaf`` where MLAS
fuses (``fmaf`` rounds once on every platform, hardware FMA or not) and
separate assignments elsewhere; the one product followed by an addition
(``p · 2^m`` added to a lane) goes through a ``volatile`` float, so no
compiler can contract it.  The dequantised inputs come from a table and the
quantisation is :class:`~deeploy_generic_c.kernels.exact_quantisation.ExactQuantiser`.

Bit-exactness is measured, not guaranteed: ONNX Runtime picks its exp kernel
by CPU (AVX-512 machines run another one, Arm yet another), and the constants
and order here are the AVX2/FMA3 kernel's.  ``opset`` ≥ 13 normalises along
``axis`` alone (rows strided when ``axis`` is not the last), older opsets
over the flattened ``axis…`` dimensions.
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMismatch, NodeParser, NodeTemplate, OperatorRepresentation
from deeploy_generic_c.parsing.common import c_float, single_binding
from deeploy_generic_c.parsing.qlinear_operands import input_zero_point, unary_operands
from deeploy_generic_c.kernels.exact_quantisation import DequantTable, ExactQuantiser
from deeploy_generic_c.parsing.requantising import exact_mode, output_range
from deeploy_generic_c.parsing.qlinear_operands import any_types

TEMPLATE = NodeTemplate("${code}", headers=("stdint.h", "string.h", "math.h"))

LOWER_RANGE = c_float(-88.3762626647949)
LOG2_E = c_float(1.44269504088896341)
ROUNDING_BIAS = "12582912.0f"
LN2_HIGH = c_float(-6.93145752e-1)
LN2_LOW = c_float(-1.42860677e-6)
POLYNOMIAL = ("0x1.694000p-10f", "0x1.125edcp-7f", "0x1.555b5ap-5f", "0x1.555450p-3f", "0x1.fffff6p-2f", "1.0f", "1.0f")
"""Coefficients of exp's polynomial, highest degree first (the last two are both 1)."""
LANES = 8


def exp_statements(value: str, result: str) -> str:
    """C statements setting the float ``result`` to MLAS's exp of the float expression ``value`` (≤ 0)."""
    horner = "".join(f"p = fmaf(p, t, {c}); " for c in POLYNOMIAL[2:])
    return (f"float t = {value}; t = t < {LOWER_RANGE} ? {LOWER_RANGE} : t; "
            f"const float b = fmaf(t, {LOG2_E}, {ROUNDING_BIAS}); const float m = b - {ROUNDING_BIAS}; "
            f"t = fmaf(m, {LN2_HIGH}, t); t = fmaf(m, {LN2_LOW}, t); "
            f"float p = fmaf({POLYNOMIAL[0]}, t, {POLYNOMIAL[1]}); {horner}"
            f"uint32_t bits; memcpy(&bits, &b, sizeof bits); bits = (uint32_t)(bits << 23) + 0x3F800000u; "
            f"float power; memcpy(&power, &bits, sizeof power); "
            f"{result} = p * power;")


class QLinearSoftmaxFloat32Parser(NodeParser):
    """com.microsoft QLinearSoftmax (X, X_scale, X_zero_point, Y_scale, Y_zero_point; ``axis``, ``opset``)."""

    inputs = (5, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        exact_mode(node)
        (x, x_scale, x_zero), (y, y_scale, y_zero) = unary_operands(ctxt, node)
        if tuple(x.shape) != tuple(y.shape):
            raise NodeMismatch("shape", f"output shape {list(y.shape)} differs from the input's {list(x.shape)}")
        rank = max(len(x.shape), 1)
        axis = int(NodeParser.attribute(node, "axis", -1))
        if not -rank <= axis < rank:
            raise NodeMismatch("attribute", f"axis {axis} is outside the input's {rank} dimensions")
        axis %= rank
        shape = list(x.shape) or [1]
        if int(NodeParser.attribute(node, "opset", 13)) >= 13:
            outer, length, inner = math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
        else:
            outer, length, inner = math.prod(shape[:axis]), math.prod(shape[axis:]), 1
        table = DequantTable("dq_x", x, float(x_scale[0]), input_zero_point(x_zero))
        quantiser = ExactQuantiser(y_scale, y, y_zero, *output_range(node, y))
        element = table.at(f"{x.c_name}[base + k * {inner}]")
        code = f"""{{
{table.declaration()}
for (int32_t row = 0; row < {outer * inner}; ++row) {{
    const int32_t base = (row / {inner}) * {length * inner} + row % {inner};
    float maximum = {element.replace("k * ", "0 * ")};
    for (int32_t k = 1; k < {length}; ++k) {{
        const float v = {element};
        maximum = v > maximum ? v : maximum;
    }}
    const float negative_maximum = -maximum;
    float lane[{LANES}] = {{{", ".join(["0.0f"] * LANES)}}};
    for (int32_t k = 0; k < {length}; ++k) {{
        volatile float e;
        {exp_statements(f"{element} + negative_maximum", "e")}
        lane[k % {LANES}] = lane[k % {LANES}] + e;
    }}
    const float pair01 = lane[0] + lane[1], pair23 = lane[2] + lane[3];
    const float pair45 = lane[4] + lane[5], pair67 = lane[6] + lane[7];
    const float low = pair01 + pair23, high = pair45 + pair67;
    const float sum = high + low;
    const float reciprocal = 1.0f / sum;
    for (int32_t k = 0; k < {length}; ++k) {{
        float e;
        {exp_statements(f"{element} + negative_maximum", "e")}
        const float probability = e * reciprocal;
        {quantiser.store(f"{y.c_name}[base + k * {inner}]", "probability")}
    }}
}}
}}"""
        return {"code": code, "size": y.numel * 4,
                "requantization": quantiser.describe(input_scale=float(x_scale[0]), axis=axis, row_length=length,
                                                     exp="MLAS AVX2/FMA3 approximation")}


MAPPERS = {
    "com.microsoft.QLinearSoftmax": single_binding(QLinearSoftmaxFloat32Parser(), any_types(5), "QLinearSoftmax float32",
                                                   TEMPLATE),
}
