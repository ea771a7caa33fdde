"""QOperator QLinearAdd/Mul and average pools without a ``requantization`` attribute (QOperator files).

ONNX Runtime dequantises and sums these in float (in an order of its own); the kernels here accumulate
``(q - zero_point)`` exactly in int32 (int64 for Add's scaled operands) and requantise the exact result once
with a 31-bit multiplier and a shift (round half to even, saturate,
:class:`~deeploy_generic_c.kernels.qlinear_requantisers.Requantiser`): within one LSB given the same inputs.
Scales and zero points must be constants; they become the multiplier/shift tables in the generated code.
Exact mode's nodes (``requantization="float32"``) are served by :mod:`~deeploy_generic_c.ops.qlinear_float32`,
fixed-point mode's (``requantization="tflite"``) by :mod:`~deeploy_generic_c.ops.qlinear_tflite`; the kernels
here decline both.  QLinearConv, QLinearMatMul and QGemm are in their families
(:mod:`deeploy_generic_c.ops.conv.qlinear`, :mod:`deeploy_generic_c.ops.matmul.qlinear`).

Every node may carry ``output_min``/``output_max``: a Relu, Clip or QCDQ clip the lowering folded into the
layer.  Quantisation is monotone, so clamping the quantised output to those bounds equals running the
activation before quantising; the requantiser takes the clamp as its ``low``/``high``
(:func:`~deeploy_generic_c.parsing.requantising.clamp_requantiser`).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.kernels.qlinear_requantisers import Requantiser, fixed_point
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.integer_bindings import INLINE
from deeploy_generic_c.parsing.qlinear_operands import (
    any_types, binary_layout, binary_operands, binary_zero_points, input_zero_point, unary_operands,
)
from deeploy_generic_c.parsing.requantising import clamp_requantiser, requantization_mode
from deeploy_generic_c.parsing.window import sliding_window


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



MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAdd": single_binding(QLinearBinaryParser(), any_types(8), "QLinearAdd fixed-point", INLINE),
    "com.microsoft.QLinearMul": single_binding(QLinearBinaryParser(), any_types(8), "QLinearMul fixed-point", INLINE),
    "com.microsoft.QLinearAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearAveragePool fixed-point", INLINE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5), "QLinearGlobalAveragePool fixed-point", INLINE),
}
