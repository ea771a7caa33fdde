"""QOperator QLinearAdd/Mul without a ``requantization`` attribute (QOperator files).

ONNX Runtime dequantises these and computes in float (in an order of its own); the kernels here accumulate
``(q - zero_point)`` exactly in int32 (int64 for Add's scaled operands) and requantise the exact result once
with a 31-bit multiplier and a shift (round half to even, saturate,
:class:`~deeploy_generic_c.kernels.qlinear_requantisers.Requantiser`): within one LSB given the same inputs.
Scales and zero points must be constants; they become the multiplier/shift tables in the generated code.
Exact mode's Add/Mul (``requantization="float32"``) are served by
:mod:`~deeploy_generic_c.ops.elementwise.qlinear_float32`, fixed-point mode's (``requantization="tflite"``) by
:mod:`~deeploy_generic_c.ops.elementwise.qlinear_tflite`; the kernels here decline both.  QLinearConv,
QLinearMatMul, QGemm and the average pools are in their families (:mod:`deeploy_generic_c.ops.conv.qlinear`,
:mod:`deeploy_generic_c.ops.matmul.qlinear`, :mod:`deeploy_generic_c.ops.pooling.qlinear`).

Every node may carry ``output_min``/``output_max``: a Relu, Clip or QCDQ clip the lowering folded into the
layer.  Quantisation is monotone, so clamping the quantised output to those bounds equals running the
activation before quantising; the requantiser takes the clamp as its ``low``/``high``
(:func:`~deeploy_generic_c.parsing.requantising.clamp_requantiser`).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.kernels.qlinear_requantisers import Requantiser, fixed_point
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.integer_bindings import INLINE
from deeploy_generic_c.parsing.qlinear_operands import any_types, binary_layout, binary_operands, binary_zero_points
from deeploy_generic_c.parsing.requantising import clamp_requantiser, without_requantization


class QLinearBinaryParser(NodeParser):
    """com.microsoft QLinearAdd / QLinearMul with numpy broadcasting (per-tensor parameters)."""

    inputs = (7, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        without_requantization(node)
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


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAdd": single_binding(QLinearBinaryParser(), any_types(8), "QLinearAdd fixed-point", INLINE),
    "com.microsoft.QLinearMul": single_binding(QLinearBinaryParser(), any_types(8), "QLinearMul fixed-point", INLINE),
}
