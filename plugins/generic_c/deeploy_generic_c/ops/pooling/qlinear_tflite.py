"""Fixed-point mode's average pools: TFLite's reference int8 AveragePool and MEAN, for ``requantization="tflite"``.

* AveragePool: input and output share scale and zero point (TFLite only has that kernel), so the raw values
  are summed and divided by the number of pixels inside the input, rounded half away from zero;
* GlobalAveragePool: TFLite writes a global average (Keras GlobalAveragePooling2D) as MEAN over the spatial
  axes, which rescales: the sum of ``x - z_x`` times one multiplier holding ``s_x / s_y`` and ``1/count``
  (:func:`~deeploy_generic_c.parsing.tflite_arithmetic.mean_parameters`), NCHW or ``channels_last`` (tf2onnx
  keeps TFLite's NHWC).

``output_min``/``output_max`` (a fused Relu, Relu6 or Clip) clamp the result, as TFLite clamps to its fused
activation's range.  Nodes without the attribute or with ``"float32"`` belong to the other pooling modules.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types, input_zero_point, quantised_operand, quantised_output
from deeploy_generic_c.parsing.tflite_arithmetic import mean_parameters
from deeploy_generic_c.parsing.tflite_operands import (
    TEMPLATE, eight_bit, require_tflite, saturate, tflite_clamp, tflite_parameters,
)
from deeploy_generic_c.parsing.window import sliding_window


class TfliteAveragePoolParser(NodeParser):
    """com.microsoft QLinearAveragePool with TFLite's rounded integer average.

    TFLite divides by the pixels inside the input (``count_include_pad=0``,
    its SAME padding); with ``count_include_pad=1`` padded pixels count as the
    zero point, ONNX's meaning, and the divisor is the full window.
    """

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        x, x_scale, x_zero = quantised_operand(ctxt, node, 0)
        y, y_scale, y_zero = quantised_output(ctxt, node, 3)
        eight_bit(x, y)
        if int(NodeParser.attribute(node, "channels_last", 0)):
            raise NodeMismatch("attribute", "channels_last=1 is not supported (the kernel reads NCHW)")
        zx = input_zero_point(x_zero)
        if x_scale.size != 1 or np.float32(x_scale[0]) != np.float32(y_scale) or zx != y_zero:
            raise NodeMismatch("attribute", f"TFLite's average pool keeps its input's quantisation (scale "
                                            f"{float(x_scale[0])}, zero point {zx}) but the output has {y_scale}, "
                                            f"{y_zero}: leave requantization unset for the rescaling kernel")
        low, high = tflite_clamp(node, y)
        kernel = [int(v) for v in NodeParser.attribute(node, "kernel_shape")]
        win = sliding_window(node, x, y, kernel, "pooling")
        include_pad = bool(int(NodeParser.attribute(node, "count_include_pad", 0)))
        if int(NodeParser.attribute(node, "ceil_mode", 0)):
            raise NodeMismatch("attribute", "ceil_mode=1 is not supported (TFLite's pools have no such windows)")
        area = win.kh * win.kw
        if include_pad:
            count, padded = str(area), f"acc += {zx} * ({area} - cnt);"
        else:
            count, padded = "cnt", ""
        code = f"""{{
for (int32_t p = 0; p < {win.n * win.c}; ++p) {{
    for (int32_t oy = 0; oy < {win.oh}; ++oy) {{
        for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
            int32_t acc = 0, cnt = 0;
            for (int32_t ky = 0; ky < {win.kh}; ++ky) {{
                const int32_t iy = oy * {win.stride_h} - {win.pad_top} + ky * {win.dil_h};
                if (iy < 0 || iy >= {win.h}) continue;
                for (int32_t kx = 0; kx < {win.kw}; ++kx) {{
                    const int32_t ix = ox * {win.stride_w} - {win.pad_left} + kx * {win.dil_w};
                    if (ix < 0 || ix >= {win.w}) continue;
                    acc += (int32_t){x.c_name}[(p * {win.h} + iy) * {win.w} + ix];
                    ++cnt;
                }}
            }}
            {padded}
            {{
                const int32_t n = {count};
                const int32_t avg = n == 0 ? {zx} : (acc > 0 ? (acc + n / 2) / n : (acc - n / 2) / n);
                {y.c_name}[(p * {win.oh} + oy) * {win.ow} + ox] = ({y.dtype.c_type}){saturate('avg', low, high)};
            }}
        }}
    }}
}}
}}"""
        return {"code": code, "size": y.numel * area,
                "requantization": {"arithmetic": "tflite", "average": "rounded half away from zero",
                                   "count_include_pad": int(include_pad), "range": [low, high]}}


class TfliteMeanParser(NodeParser):
    """com.microsoft QLinearGlobalAveragePool as TFLite's MEAN over the spatial axes (NCHW or channels_last)."""

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        require_tflite(node)
        x, x_scale, x_zero = quantised_operand(ctxt, node, 0)
        y, y_scale, y_zero = quantised_output(ctxt, node, 3)
        eight_bit(x, y)
        if x_scale.size != 1 or len(x.shape) < 3:
            raise NodeMismatch("shape", "the input scale must be per tensor and the input at least 3-D")
        zx = input_zero_point(x_zero)
        low, high = tflite_clamp(node, y)
        channels_last = bool(int(NodeParser.attribute(node, "channels_last", 0)))
        batch = x.shape[0]
        channels = x.shape[-1] if channels_last else x.shape[1]
        count = math.prod(x.shape[1:-1] if channels_last else x.shape[2:])
        multiplier, shift = tflite_parameters(mean_parameters, x_scale[0], y_scale, count)
        # element e of plane (b, c): NCHW (b·C + c)·count + e; channels_last (b·count + e)·C + c
        index = f"(b * {count} + e) * {channels} + c" if channels_last else f"(b * {channels} + c) * {count} + e"
        code = f"""{{
for (int32_t b = 0; b < {batch}; ++b) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        int32_t acc = 0;
        for (int32_t e = 0; e < {count}; ++e) acc += (int32_t){x.c_name}[{index}] - {zx};
        {y.c_name}[b * {channels} + c] = ({y.dtype.c_type})dcg_tfl_requantize(acc, {multiplier}, {shift}, {y_zero}, {low}, {high});
    }}
}}
}}"""
        return {"code": code, "size": x.numel,
                "requantization": {"arithmetic": "tflite", "kernel": "MEAN", "multiplier": multiplier,
                                   "shift": shift, "zero_point": y_zero, "range": [low, high]}}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAveragePool": single_binding(TfliteAveragePoolParser(), any_types(5), "QLinearAveragePool TFLite",
                                                       TEMPLATE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(TfliteMeanParser(), any_types(5),
                                                             "QLinearGlobalAveragePool TFLite MEAN", TEMPLATE),
}
