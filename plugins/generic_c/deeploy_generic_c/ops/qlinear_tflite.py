"""Fixed-point mode's QLinearAdd, QLinearMul, average pools and QLinearSoftmax: TFLite's reference int8 kernels.

``--quantization fixed-point`` marks its fused nodes ``requantization="tflite"``
and promises LiteRT's outputs bit for bit on a model converted from ``.tflite``.
Each TFLite kernel has an arithmetic of its own, reproduced here with the
parameters :mod:`~deeploy_generic_c.parsing.tflite_arithmetic` derives and the
helpers of ``dcg_tflite.h``:

* Add: both operands less their zero points, shifted left by 20 bits, brought
  to ``2 · max(s_a, s_b)`` by 31-bit multipliers, summed, rescaled to ``s_y``;
* Mul: the product of the operands less their zero points, requantised once;
* AveragePool: input and output share scale and zero point (TFLite only has
  that kernel), so the raw values are summed and divided by the number of
  pixels inside the input, rounded half away from zero;
* GlobalAveragePool: TFLite writes a global average (Keras
  GlobalAveragePooling2D) as MEAN over the spatial axes, which rescales: the
  sum of ``x - z_x`` times one multiplier holding ``s_x / s_y`` and ``1/count``
  (:func:`~deeploy_generic_c.parsing.tflite_arithmetic.mean_parameters`), NCHW or
  ``channels_last`` (tf2onnx keeps TFLite's NHWC);
* Softmax: differences to the row maximum in Q5.26, a fixed-point exp, a
  Q12.19 sum, its fixed-point reciprocal; the output scale is 1/256 at the
  type's minimum (TFLite's only one).

``output_min``/``output_max`` (a fused Relu, Relu6 or Clip) clamp the result,
as TFLite clamps to its fused activation's range.  Nodes without the
attribute (QOperator files) or with ``"float32"`` (exact mode) belong to other
modules, so every parser here refuses them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeMismatch, NodeParser, NodeTemplate, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import (
    quantised_operand,
    quantised_output,
    binary_layout,
    binary_operands,
    binary_zero_points,
    input_zero_point,
    unary_operands,
)
from deeploy_generic_c.parsing.window import sliding_window
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.qlinear_operands import any_types
from deeploy_generic_c.parsing.tflite_arithmetic import (
    TfliteParameterError,
    add_parameters,
    mean_parameters,
    mul_parameters,
    softmax_parameters,
)
from deeploy_generic_c.kernels.tflite_requantiser import HEADER

_T = TypeVar("_T")
TEMPLATE = NodeTemplate("${code}", headers=("stdint.h", HEADER))
SOFTMAX_SCALE = np.float32(1.0 / 256.0)
"""TFLite's int8/uint8 softmax writes probabilities in steps of 1/256, from the type's minimum."""
MAX_SOFTMAX_DEPTH = 4096
"""TFLite sums a row's exponentials (each at most 2^19) in 32 bits: more terms could overflow the sum."""


def _require_tflite(node: gs.Node) -> None:
    """Serve only nodes fixed-point mode fused (``requantization="tflite"``)."""
    mode = NodeParser.attribute(node, "requantization", None)
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode != "tflite":  # another family of kernels ("op": the farthest miss, so theirs is the reason reported)
        raise NodeMismatch("op", f"requantization={mode!r}; this kernel computes TFLite's arithmetic "
                                 "(requantization='tflite')")


def _eight_bit(*buffers: Buffer) -> None:
    """TFLite's kernels reproduced here are its int8/uint8 ones (16-bit tensors take other paths)."""
    for buffer in buffers:
        if buffer.dtype.is_float or np.dtype(buffer.dtype.numpy).itemsize != 1:
            raise NodeMismatch("dtype", f"{buffer.name} is {buffer.dtype}; TFLite's kernels here take int8/uint8")


def _clamp(node: gs.Node, output: Buffer) -> tuple[int, int]:
    """The output type's range narrowed by ``output_min``/``output_max`` (the fused activation)."""
    info = np.iinfo(output.dtype.numpy)
    low = max(int(info.min), int(NodeParser.attribute(node, "output_min", int(info.min))))
    high = min(int(info.max), int(NodeParser.attribute(node, "output_max", int(info.max))))
    if low > high:
        raise NodeMismatch("attribute", f"output_min {low} exceeds output_max {high} within {output.dtype}")
    return low, high


def _parameters(derive: Callable[..., _T], *scales: float) -> _T:
    """A TFLite parameter derivation whose refusal becomes a NodeMismatch naming the reason."""
    try:
        return derive(*scales)
    except TfliteParameterError as error:
        raise NodeMismatch("attribute", f"TFLite would refuse these scales: {error}") from None


def _saturate(value: str, low: int, high: int) -> str:
    return f"({value} < {low} ? {low} : ({value} > {high} ? {high} : {value}))"


class TfliteBinaryParser(NodeParser):
    """com.microsoft QLinearAdd / QLinearMul (per-tensor parameters, numpy broadcasting) as TFLite computes them."""

    inputs = (7, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        _require_tflite(node)
        (a, a_scale, a_zero), (b, b_scale, b_zero), (y, y_scale, y_zero) = binary_operands(ctxt, node)
        _eight_bit(a, b, y)
        za, zb = binary_zero_points(a_zero, b_zero)
        low, high = _clamp(node, y)
        shape, strides = binary_layout(a, b, y)
        qa, qb = f"((int32_t){a.c_name}[o0] - {za})", f"((int32_t){b.c_name}[o1] - {zb})"
        if node.op == "QLinearMul":
            multiplier, shift = _parameters(mul_parameters, a_scale[0], b_scale[0], y_scale)
            body = (f"{y.c_name}[y] = ({y.dtype.c_type})dcg_tfl_requantize({qa} * {qb}, {multiplier}, {shift}, "
                    f"{y_zero}, {low}, {high});")
            described: dict[str, object] = {"multiplier": multiplier, "shift": shift}
        else:
            p = _parameters(add_parameters, a_scale[0], b_scale[0], y_scale)
            body = (f"{{ const int32_t ta = dcg_tfl_multiply({qa} * {1 << p.left_shift}, {p.input1[0]}, {p.input1[1]}); "
                    f"const int32_t tb = dcg_tfl_multiply({qb} * {1 << p.left_shift}, {p.input2[0]}, {p.input2[1]}); "
                    f"const int32_t tv = dcg_tfl_add_wrap(dcg_tfl_multiply(dcg_tfl_add_wrap(ta, tb), {p.output[0]}, "
                    f"{p.output[1]}), {y_zero}); "
                    f"{y.c_name}[y] = ({y.dtype.c_type}){_saturate('tv', low, high)}; }}")
            described = {"left_shift": p.left_shift, "input_multipliers": [p.input1[0], p.input2[0]],
                         "input_shifts": [p.input1[1], p.input2[1]], "multiplier": p.output[0], "shift": p.output[1]}
        return {"code": offset_loops(shape, strides, body), "size": y.numel * 2,
                "requantization": {"arithmetic": "tflite", **described, "zero_point": y_zero, "range": [low, high]}}


class TfliteAveragePoolParser(NodeParser):
    """com.microsoft QLinearAveragePool with TFLite's rounded integer average.

    TFLite divides by the pixels inside the input (``count_include_pad=0``,
    its SAME padding); with ``count_include_pad=1`` padded pixels count as the
    zero point, ONNX's meaning, and the divisor is the full window.
    """

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        _require_tflite(node)
        x, x_scale, x_zero = quantised_operand(ctxt, node, 0)
        y, y_scale, y_zero = quantised_output(ctxt, node, 3)
        _eight_bit(x, y)
        if int(NodeParser.attribute(node, "channels_last", 0)):
            raise NodeMismatch("attribute", "channels_last=1 is not supported (the kernel reads NCHW)")
        zx = input_zero_point(x_zero)
        if x_scale.size != 1 or np.float32(x_scale[0]) != np.float32(y_scale) or zx != y_zero:
            raise NodeMismatch("attribute", f"TFLite's average pool keeps its input's quantisation (scale "
                                            f"{float(x_scale[0])}, zero point {zx}) but the output has {y_scale}, "
                                            f"{y_zero}: leave requantization unset for the rescaling kernel")
        low, high = _clamp(node, y)
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
                {y.c_name}[(p * {win.oh} + oy) * {win.ow} + ox] = ({y.dtype.c_type}){_saturate('avg', low, high)};
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
        _require_tflite(node)
        x, x_scale, x_zero = quantised_operand(ctxt, node, 0)
        y, y_scale, y_zero = quantised_output(ctxt, node, 3)
        _eight_bit(x, y)
        if x_scale.size != 1 or len(x.shape) < 3:
            raise NodeMismatch("shape", "the input scale must be per tensor and the input at least 3-D")
        zx = input_zero_point(x_zero)
        low, high = _clamp(node, y)
        channels_last = bool(int(NodeParser.attribute(node, "channels_last", 0)))
        batch = x.shape[0]
        channels = x.shape[-1] if channels_last else x.shape[1]
        count = math.prod(x.shape[1:-1] if channels_last else x.shape[2:])
        multiplier, shift = _parameters(mean_parameters, x_scale[0], y_scale, count)
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


def _softmax_rows(node: gs.Node, shape: tuple[int, ...]) -> tuple[int, int, int]:
    """(outer, depth, inner): rows of ``depth`` elements ``inner`` apart, as ``axis`` and ``opset`` define them."""
    rank = len(shape)
    axis = int(NodeParser.attribute(node, "axis", -1))
    if not -rank <= axis < rank:
        raise NodeMismatch("attribute", f"axis {axis} is outside a rank-{rank} input")
    axis %= rank
    if int(NodeParser.attribute(node, "opset", 13)) >= 13:
        return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])
    return math.prod(shape[:axis]), math.prod(shape[axis:]), 1


class TfliteSoftmaxParser(NodeParser):
    """com.microsoft QLinearSoftmax as TFLite's reference int8/uint8 softmax (beta 1)."""

    inputs = (5, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        _require_tflite(node)
        (x, x_scale, _), (y, y_scale, y_zero) = unary_operands(ctxt, node)
        _eight_bit(x, y)
        type_min = int(np.iinfo(y.dtype.numpy).min)
        if np.float32(y_scale) != SOFTMAX_SCALE or y_zero != type_min:
            raise NodeMismatch("attribute", f"TFLite's softmax outputs scale 1/256 with zero point {type_min} for "
                                            f"{y.dtype}, not scale {y_scale} and zero point {y_zero}")
        outer, depth, inner = _softmax_rows(node, tuple(x.shape))
        if depth > MAX_SOFTMAX_DEPTH:
            raise NodeMismatch("shape", f"softmax over {depth} elements: TFLite's 32-bit sum holds at most "
                                        f"{MAX_SOFTMAX_DEPTH}")
        p = _parameters(softmax_parameters, x_scale[0])
        low, high = _clamp(node, y)
        step = f" * {inner}" if inner > 1 else ""
        diff = f"(int32_t){x.c_name}[base + c{step}] - row_max"
        code = f"""{{
for (int32_t o = 0; o < {outer}; ++o) {{
    for (int32_t i = 0; i < {inner}; ++i) {{
        const int32_t base = o * {depth * inner} + i;
        int32_t row_max = {x.c_name}[base];
        uint32_t sum = 0;
        int32_t bits_over_unit, reciprocal;
        for (int32_t c = 1; c < {depth}; ++c) {{
            const int32_t v = {x.c_name}[base + c{step}];
            if (v > row_max) row_max = v;
        }}
        for (int32_t c = 0; c < {depth}; ++c) {{
            const int32_t d = {diff};
            if (d >= {p.diff_min}) sum += (uint32_t)dcg_tfl_softmax_term(dcg_tfl_softmax_exp(d, {p.multiplier}, {p.left_shift}));
        }}
        reciprocal = dcg_tfl_softmax_reciprocal(dcg_tfl_from_bits(sum), &bits_over_unit);
        for (int32_t c = 0; c < {depth}; ++c) {{
            const int32_t d = {diff};
            {y.c_name}[base + c{step}] = ({y.dtype.c_type})(d >= {p.diff_min}
                ? dcg_tfl_softmax_output(dcg_tfl_softmax_exp(d, {p.multiplier}, {p.left_shift}), reciprocal, bits_over_unit, 8, {type_min}, {low}, {high})
                : {low});
        }}
    }}
}}
}}"""
        return {"code": code, "size": y.numel * 4,
                "requantization": {"arithmetic": "tflite", "multiplier": p.multiplier, "left_shift": p.left_shift,
                                   "diff_min": p.diff_min, "zero_point": y_zero, "range": [low, high]}}


MAPPERS = {
    "com.microsoft.QLinearAdd": single_binding(TfliteBinaryParser(), any_types(8), "QLinearAdd TFLite", TEMPLATE),
    "com.microsoft.QLinearMul": single_binding(TfliteBinaryParser(), any_types(8), "QLinearMul TFLite", TEMPLATE),
    "com.microsoft.QLinearAveragePool": single_binding(TfliteAveragePoolParser(), any_types(5), "QLinearAveragePool TFLite",
                                                       TEMPLATE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(TfliteMeanParser(), any_types(5),
                                                             "QLinearGlobalAveragePool TFLite MEAN", TEMPLATE),
    "com.microsoft.QLinearSoftmax": single_binding(TfliteSoftmaxParser(), any_types(5), "QLinearSoftmax TFLite", TEMPLATE),
}
