"""Integer-only quantised kernels (fixed-point mode): QLinearConv, QLinearAdd/Mul, pooling.

QLinearMatMul and QGemm are in the matmul/gemm family (:mod:`deeploy_generic_c.ops.matmul.qlinear`) and use
the same requantisers.

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

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.kernels import integer_conv as conv_kernels
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
from deeploy_generic_c.kernels.qlinear_requantisers import Requantiser, fixed_point
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
    "com.microsoft.QLinearAdd": single_binding(QLinearBinaryParser(), any_types(8), "QLinearAdd fixed-point", INLINE),
    "com.microsoft.QLinearMul": single_binding(QLinearBinaryParser(), any_types(8), "QLinearMul fixed-point", INLINE),
    "com.microsoft.QLinearAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearAveragePool fixed-point", INLINE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearGlobalAveragePool fixed-point", INLINE),
}
