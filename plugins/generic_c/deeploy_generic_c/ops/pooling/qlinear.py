"""QOperator average pools without a ``requantization`` attribute: QLinearAveragePool and QLinearGlobalAveragePool.

ONNX Runtime dequantises and sums these in float (in an order of its own); this kernel accumulates
``(x - zx)`` exactly in int32 and requantises the sum once with a 31-bit multiplier holding
``s_x / (s_y · area)`` and a shift (round half to even, saturate,
:class:`~deeploy_generic_c.kernels.qlinear_requantisers.Requantiser`): within one LSB given the same inputs.
Every window counts its full area, so only ``count_include_pad=1`` (or no padding) is taken.  Exact mode's
and fixed-point mode's nodes go to :mod:`.qlinear_float32` and :mod:`.qlinear_tflite`.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.qlinear_requantisers import Requantiser
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.integer_bindings import INLINE
from deeploy_generic_c.parsing.qlinear_operands import any_types, input_zero_point, unary_operands
from deeploy_generic_c.parsing.requantising import clamp_requantiser, without_requantization
from deeploy_generic_c.parsing.window import sliding_window


class QLinearAveragePoolParser(NodeParser):
    """com.microsoft QLinearAveragePool / QLinearGlobalAveragePool: every window counts its full area."""

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        without_requantization(node)
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
    "com.microsoft.QLinearAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5),
                                                       "QLinearAveragePool fixed-point", INLINE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(QLinearAveragePoolParser(), any_types(5),
                                                             "QLinearGlobalAveragePool fixed-point", INLINE),
}
