"""TFLite's int8 Add and Mul on CMSIS-NN: ``arm_elementwise_add_s8`` / ``arm_elementwise_mul_s8``.

Serves fixed-point mode's com.microsoft QLinearAdd / QLinearMul whose two
operands and output have the same shape: the kernels walk one flat block of
``block_size`` elements, so they are layout-agnostic (NHWC or NCHW alike).  A
broadcasting node falls through to generic C, which strides each operand.

The parameters are TFLite's (:func:`tflite_parameters.add_parameters`,
:func:`~tflite_parameters.mul_parameters`, shared with generic C): Add shifts
both operands (less their zero points) left by 20 bits, brings them to
``2 · max(s_a, s_b)`` and the sum to ``s_y``; Mul requantises the product
once.  Both round as TFLite's Add/Mul do, twice (CMSIS-NN's default
``arm_nn_requantize``): their sources get no single-rounding definition.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_core.plugin_api import tflite_parameters as tfl

from deeploy_cortex_m.ops.cmsis_sources import sources
from deeploy_cortex_m.ops.cmsis_call import (
    activation_range, cmsis_mapper, int8, output, per_tensor, quantised, require_tflite,
)



class CmsisElementwiseParser(NodeParser):
    """QLinearAdd / QLinearMul of int8 operands of one shape (no broadcasting), TFLite's arithmetic."""

    inputs = (8, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        a, a_scales, a_zeros = quantised(ctxt, node, 0)
        b, b_scales, b_zeros = quantised(ctxt, node, 3)
        y, y_scale, zy = output(ctxt, node, 6)
        int8(a, b, y)
        if not (tuple(a.shape) == tuple(b.shape) == tuple(y.shape)):
            raise NodeMismatch("shape", f"operands {list(a.shape)} and {list(b.shape)} broadcast to {list(y.shape)}; "
                                        "CMSIS-NN adds/multiplies equal shapes only")
        (a_scale, za), (b_scale, zb) = per_tensor(a_scales, a_zeros, "A"), per_tensor(b_scales, b_zeros, "B")
        low, high = activation_range(node)
        try:
            if node.op == "QLinearMul":
                multiplier, shift = tfl.mul_parameters(a_scale, b_scale, y_scale)
                call = (f"arm_elementwise_mul_s8({a.c_name}, {b.c_name}, {-za}, {-zb}, {y.c_name}, {zy}, {multiplier}, "
                        f"{shift}, {low}, {high}, {y.numel});")
                described: dict[str, object] = {"multiplier": multiplier, "shift": shift}
            else:
                p = tfl.add_parameters(a_scale, b_scale, y_scale)
                call = (f"arm_elementwise_add_s8({a.c_name}, {b.c_name}, {-za}, {p.input1[0]}, {p.input1[1]}, {-zb}, "
                        f"{p.input2[0]}, {p.input2[1]}, {p.left_shift}, {y.c_name}, {zy}, {p.output[0]}, "
                        f"{p.output[1]}, {low}, {high}, {y.numel});")
                described = {"left_shift": p.left_shift, "input_multipliers": [p.input1[0], p.input2[0]],
                             "input_shifts": [p.input1[1], p.input2[1]], "multiplier": p.output[0],
                             "shift": p.output[1]}
        except tfl.TfliteParameterError as error:
            raise NodeMismatch("attribute", f"TFLite parameters: {error}") from None
        return {"code": f"(void){call}", "size": y.numel,
                "requantization": {"arithmetic": "tflite", "rounding": "double", **described, "zero_point": zy,
                                   "range": [low, high]}}


def mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """Op type -> the CMSIS-NN element-wise mappers (tried before generic C's) on the core's path."""
    return {
        "com.microsoft.QLinearAdd": (cmsis_mapper(CmsisElementwiseParser(), 8,
                                                  "QLinearAdd CMSIS-NN arm_elementwise_add_s8",
                                                  sources("arm_elementwise_add_s8", mve)),),
        "com.microsoft.QLinearMul": (cmsis_mapper(CmsisElementwiseParser(), 8,
                                                  "QLinearMul CMSIS-NN arm_elementwise_mul_s8",
                                                  sources("arm_elementwise_mul_s8", mve)),),
    }
