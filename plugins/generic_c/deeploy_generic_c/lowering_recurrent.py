"""QDQ recurrences keep their int8 weights: LSTM/GRU/RNN read quantised parameters without a dequantised copy.

Asked to quantise LSTM or GRU, ONNX Runtime's ``quantize_static`` (QDQ
format) stores W, R and B (and P) as int8 initializers behind per-tensor
DequantizeLinear nodes.  Run as written, each DequantizeLinear writes a float
copy of its whole tensor into the arena before the recurrence starts, so a
quantised model needs more working memory than the float one.  This pass
hands the int8 constant straight to the recurrence instead and records the
scale and zero point on the node (``int8_parameter_scales`` and
``int8_parameter_zero_points``, one entry per input position, scale 0 where
the input is float); the kernel dequantises each element where it reads it,
with DequantizeLinear's own arithmetic, so the result is bit for bit the one
of the unfused graph.  The dead DequantizeLinear nodes go with the cleanup
that ends lowering.  Only int8 constants with a scalar float scale and a
scalar (or absent) zero point qualify; anything else stays as it was.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Modifies, Pass

PARAMETER_INPUTS = {"LSTM": (1, 2, 3, 7), "GRU": (1, 2, 3), "RNN": (1, 2, 3)}
"""Input positions of each recurrence that hold parameters (W, R, B and, for LSTM, P)."""

SCALES = "int8_parameter_scales"
ZERO_POINTS = "int8_parameter_zero_points"


def per_tensor_int8(tensor: gs.Tensor) -> tuple[gs.Constant, float, int] | None:
    """(int8 constant, scale, zero point) when ``tensor`` is a per-tensor DequantizeLinear of an int8 constant."""
    if len(tensor.inputs) != 1:
        return None
    producer = tensor.inputs[0]
    if producer.op != "DequantizeLinear" or producer.domain not in (None, "", "ai.onnx"):
        return None
    if producer.attrs.get("block_size"):
        return None  # blocked quantisation: one scale per block, not per tensor
    quantized, scale = producer.inputs[0], producer.inputs[1]
    zero_point = producer.inputs[2] if len(producer.inputs) > 2 and producer.inputs[2].name else None
    if not isinstance(quantized, gs.Constant) or np.asarray(quantized.values).dtype != np.int8:
        return None
    if not isinstance(scale, gs.Constant) or np.asarray(scale.values).size != 1 or \
            np.asarray(scale.values).dtype != np.float32:
        return None
    if float(np.asarray(scale.values).reshape(-1)[0]) == 0.0:
        return None  # 0 marks a float input in the node's scale list
    zero = 0
    if zero_point is not None:
        if not isinstance(zero_point, gs.Constant) or np.asarray(zero_point.values).size != 1 or \
                np.asarray(zero_point.values).dtype != np.int8:
            return None
        zero = int(np.asarray(zero_point.values).reshape(-1)[0])
    return quantized, float(np.asarray(scale.values).reshape(-1)[0]), zero


class RecurrentInt8Parameters(Pass[gs.Graph]):
    """LSTM/GRU/RNN parameters produced by a per-tensor DequantizeLinear of an int8 constant become that constant."""

    def modifies(self) -> Modifies:
        return Modifies.Edges

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        rewritten = 0
        for node in graph.nodes:
            positions = PARAMETER_INPUTS.get(node.op)
            if positions is None or node.domain not in (None, "", "ai.onnx") or SCALES in node.attrs:
                continue
            scales, zero_points = [0.0] * len(node.inputs), [0] * len(node.inputs)
            for index in positions:
                if index >= len(node.inputs) or not node.inputs[index].name:
                    continue
                found = per_tensor_int8(node.inputs[index])
                if found is None:
                    continue
                node.inputs[index], scales[index], zero_points[index] = found
            if any(scales):
                node.attrs[SCALES] = scales
                node.attrs[ZERO_POINTS] = zero_points
                rewritten += 1
        return rewritten or None
