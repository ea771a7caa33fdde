"""Fixed-point mode's QLinearSoftmax: TFLite's reference int8/uint8 softmax, for ``requantization="tflite"``.

Differences to the row maximum in Q5.26, a fixed-point exp, a Q12.19 sum, its fixed-point reciprocal (the
helpers of ``dcg_tflite.h``, parameters from
:func:`~deeploy_generic_c.parsing.tflite_arithmetic.softmax_parameters`); the output scale is 1/256 at the
type's minimum (TFLite's only one).  ``output_min``/``output_max`` clamp the result.  Nodes without the
attribute or with ``"float32"`` (exact mode, :mod:`.qlinear_float32`) are refused.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types, unary_operands
from deeploy_generic_c.parsing.tflite_arithmetic import softmax_parameters
from deeploy_generic_c.parsing.tflite_operands import TEMPLATE, eight_bit, require_tflite, tflite_clamp, tflite_parameters

SOFTMAX_SCALE = np.float32(1.0 / 256.0)
"""TFLite's int8/uint8 softmax writes probabilities in steps of 1/256, from the type's minimum."""
MAX_SOFTMAX_DEPTH = 4096
"""TFLite sums a row's exponentials (each at most 2^19) in 32 bits: more terms could overflow the sum."""


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
        require_tflite(node)
        (x, x_scale, _), (y, y_scale, y_zero) = unary_operands(ctxt, node)
        eight_bit(x, y)
        type_min = int(np.iinfo(y.dtype.numpy).min)
        if np.float32(y_scale) != SOFTMAX_SCALE or y_zero != type_min:
            raise NodeMismatch("attribute", f"TFLite's softmax outputs scale 1/256 with zero point {type_min} for "
                                            f"{y.dtype}, not scale {y_scale} and zero point {y_zero}")
        outer, depth, inner = _softmax_rows(node, tuple(x.shape))
        if depth > MAX_SOFTMAX_DEPTH:
            raise NodeMismatch("shape", f"softmax over {depth} elements: TFLite's 32-bit sum holds at most "
                                        f"{MAX_SOFTMAX_DEPTH}")
        p = tflite_parameters(softmax_parameters, x_scale[0])
        low, high = tflite_clamp(node, y)
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


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearSoftmax": single_binding(TfliteSoftmaxParser(), any_types(5), "QLinearSoftmax TFLite", TEMPLATE),
}
