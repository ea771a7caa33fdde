"""Fixed-point mode's QLinearAdd and QLinearMul: TFLite's reference int8 kernels.

``--quantization fixed-point`` marks its fused nodes ``requantization="tflite"``
and promises LiteRT's outputs bit for bit on a model converted from ``.tflite``.
Each TFLite kernel has an arithmetic of its own, reproduced here with the
parameters :mod:`~deeploy_generic_c.parsing.tflite_arithmetic` derives and the
helpers of ``dcg_tflite.h``:

* Add: both operands less their zero points, shifted left by 20 bits, brought
  to ``2 · max(s_a, s_b)`` by 31-bit multipliers, summed, rescaled to ``s_y``;
* Mul: the product of the operands less their zero points, requantised once;
* AveragePool and GlobalAveragePool (TFLite's MEAN): in the pooling family,
  :mod:`~deeploy_generic_c.ops.pooling.qlinear_tflite`;
* Softmax: in the softmax family, :mod:`~deeploy_generic_c.ops.softmax.qlinear_tflite`.

``output_min``/``output_max`` (a fused Relu, Relu6 or Clip) clamp the result,
as TFLite clamps to its fused activation's range.  Nodes without the
attribute (QOperator files) or with ``"float32"`` (exact mode) belong to other
modules, so every parser here refuses them.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types, binary_layout, binary_operands, binary_zero_points
from deeploy_generic_c.parsing.tflite_arithmetic import add_parameters, mul_parameters
from deeploy_generic_c.parsing.tflite_operands import (
    TEMPLATE, eight_bit, require_tflite, saturate, tflite_clamp, tflite_parameters,
)


class TfliteBinaryParser(NodeParser):
    """com.microsoft QLinearAdd / QLinearMul (per-tensor parameters, numpy broadcasting) as TFLite computes them."""

    inputs = (7, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        (a, a_scale, a_zero), (b, b_scale, b_zero), (y, y_scale, y_zero) = binary_operands(ctxt, node)
        eight_bit(a, b, y)
        za, zb = binary_zero_points(a_zero, b_zero)
        low, high = tflite_clamp(node, y)
        shape, strides = binary_layout(a, b, y)
        qa, qb = f"((int32_t){a.c_name}[o0] - {za})", f"((int32_t){b.c_name}[o1] - {zb})"
        if node.op == "QLinearMul":
            multiplier, shift = tflite_parameters(mul_parameters, a_scale[0], b_scale[0], y_scale)
            body = (f"{y.c_name}[y] = ({y.dtype.c_type})dcg_tfl_requantize({qa} * {qb}, {multiplier}, {shift}, "
                    f"{y_zero}, {low}, {high});")
            described: dict[str, object] = {"multiplier": multiplier, "shift": shift}
        else:
            p = tflite_parameters(add_parameters, a_scale[0], b_scale[0], y_scale)
            body = (f"{{ const int32_t ta = dcg_tfl_multiply({qa} * {1 << p.left_shift}, {p.input1[0]}, {p.input1[1]}); "
                    f"const int32_t tb = dcg_tfl_multiply({qb} * {1 << p.left_shift}, {p.input2[0]}, {p.input2[1]}); "
                    f"const int32_t tv = dcg_tfl_add_wrap(dcg_tfl_multiply(dcg_tfl_add_wrap(ta, tb), {p.output[0]}, "
                    f"{p.output[1]}), {y_zero}); "
                    f"{y.c_name}[y] = ({y.dtype.c_type}){saturate('tv', low, high)}; }}")
            described = {"left_shift": p.left_shift, "input_multipliers": [p.input1[0], p.input2[0]],
                         "input_shifts": [p.input1[1], p.input2[1]], "multiplier": p.output[0], "shift": p.output[1]}
        return {"code": offset_loops(shape, strides, body), "size": y.numel * 2,
                "requantization": {"arithmetic": "tflite", **described, "zero_point": y_zero, "range": [low, high]}}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAdd": single_binding(TfliteBinaryParser(), any_types(8), "QLinearAdd TFLite", TEMPLATE),
    "com.microsoft.QLinearMul": single_binding(TfliteBinaryParser(), any_types(8), "QLinearMul TFLite", TEMPLATE),
}
