"""QOperator convolution: ONNX's QLinearConv, in each requantisation arithmetic.

The int32 accumulator of ``(x - zx)(w - zw[m])`` is requantised once per output with the arithmetic the node's
``requantization`` attribute names (:mod:`deeploy_generic_c.parsing.requantising`): ONNX Runtime's float32
rounding in integers (QOperator files, no attribute), float32 (exact mode) or TFLite's (fixed-point mode).
Symmetric weights take the integer family's fast kernels where they apply
(:mod:`deeploy_generic_c.kernels.integer_conv`, with an int16 scratch buffer); other layers the loops of
:mod:`deeploy_generic_c.kernels.qlinear_conv`.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels import integer_conv as conv_kernels
from deeploy_generic_c.kernels.float_bias import float_bias
from deeploy_generic_c.kernels.qlinear_conv import conv_loops
from deeploy_generic_c.parsing.qlinear_operands import per_tensor_value, quantised_operand, quantised_output
from deeploy_generic_c.parsing.requantising import RequantisingParser, requantised_mappers
from deeploy_generic_c.parsing.window import convolution_window


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


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "QLinearConv": requantised_mappers(QLinearConvParser, 9, "QLinearConv", scratch=True),
}
"""Op type -> mappers: fixed-point (no attribute), then float32, then TFLite requantisation."""
