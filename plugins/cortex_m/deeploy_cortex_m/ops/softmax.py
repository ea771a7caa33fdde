"""TFLite's int8 Softmax on CMSIS-NN: ``arm_softmax_s8`` (rows along the last axis).

Serves fixed-point mode's com.microsoft QLinearSoftmax over the last axis with
TFLite's only int8 output quantisation (scale 1/256, zero point -128) and no
narrower clamp (``arm_softmax_s8`` takes none).  Parameters are TFLite's
(:func:`tflite_parameters.softmax_parameters`, shared with generic C): the
differences to the row maximum are scaled to Q5.26 by ``(multiplier,
left_shift)``, those below ``diff_min`` give the output minimum.  CMSIS-NN's
fixed-point exp, Q12.19 sum and reciprocal are gemmlowp's, as LiteRT's
reference kernel's are; the QEMU tests compare both softmax models
(``softmax``, and ``softmax_wide`` where most differences fall beyond the
radius) with LiteRT, bit for bit.  Any other axis, depth above 4096 or output
quantisation falls through to generic C.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_core.plugin_api import tflite_parameters as tfl

from deeploy_cortex_m.ops.cmsis_sources import sources
from deeploy_cortex_m.ops.cmsis_call import activation_range, cmsis_mapper, int8, output, per_tensor, quantised, require_tflite

OUTPUT_SCALE = np.float32(1.0 / 256.0)
"""TFLite's int8 softmax writes probabilities in steps of 1/256 from -128."""
MAX_DEPTH = 4096
"""The exponentials (each at most 2^19 in Q12.19) are summed in 32 bits: more terms could overflow."""


class CmsisSoftmaxParser(NodeParser):
    """QLinearSoftmax over the last axis, int8, TFLite's output quantisation, no fused clamp."""

    inputs = (5, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        x, x_scales, x_zeros = quantised(ctxt, node, 0)
        y, y_scale, zy = output(ctxt, node, 3)
        int8(x, y)
        x_scale, _ = per_tensor(x_scales, x_zeros, "the input")
        rank = len(x.shape)
        axis = int(self.attribute(node, "axis", -1))
        if rank == 0 or axis % rank != rank - 1 and math.prod(x.shape[axis % rank + 1:]) != 1:
            raise NodeMismatch("attribute", f"axis {axis} of a rank-{rank} input: arm_softmax_s8 runs the last axis")
        opset_13 = int(self.attribute(node, "opset", 13)) >= 13
        depth = int(x.shape[axis % rank]) if opset_13 else math.prod(x.shape[axis % rank:])
        if np.float32(y_scale) != OUTPUT_SCALE or zy != -128:
            raise NodeMismatch("attribute", f"output scale {y_scale}, zero point {zy}: TFLite's int8 softmax "
                                            "writes scale 1/256 from -128")
        if activation_range(node) != (-128, 127):
            raise NodeMismatch("attribute", "a fused clamp: arm_softmax_s8 has none")
        if depth > MAX_DEPTH:
            raise NodeMismatch("shape", f"softmax over {depth} elements; the 32-bit sum holds at most {MAX_DEPTH}")
        try:
            p = tfl.softmax_parameters(x_scale)
        except tfl.TfliteParameterError as error:
            raise NodeMismatch("attribute", f"TFLite parameters: {error}") from None
        rows = x.numel // depth
        call = (f"arm_softmax_s8((const int8_t *){x.c_name}, {rows}, {depth}, {p.multiplier}, {p.left_shift}, "
                f"{p.diff_min}, (int8_t *){y.c_name});")
        return {"code": call, "size": y.numel * 4,
                "requantization": {"arithmetic": "tflite", "multiplier": p.multiplier, "left_shift": p.left_shift,
                                   "diff_min": p.diff_min, "zero_point": zy, "range": [-128, 127]}}


def mappers(mve: bool) -> dict[str, tuple[NodeMapper, ...]]:
    """Op type -> the CMSIS-NN softmax mapper (tried before generic C's) on the core's path."""
    return {"com.microsoft.QLinearSoftmax": (cmsis_mapper(CmsisSoftmaxParser(), 5,
                                                          "QLinearSoftmax CMSIS-NN arm_softmax_s8",
                                                          sources("arm_softmax_s8", mve)),)}
