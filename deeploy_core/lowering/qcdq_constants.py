"""Brevitas' QCDQ weights folded into the integer constants ONNX Runtime's quantiser would have written.

Brevitas' ``export_onnx_qcdq`` writes a quantised weight in one of two ways:
the TorchScript exporter as ``Clip(int8 constant, low, high) → DequantizeLinear``
(the clip narrows the range: 4-bit weights, narrow range), the dynamo exporter
as ``QuantizeLinear(float constant) → Clip(low, high) → DequantizeLinear``.
Both compute a constant, but the QDQ rewrite
(:mod:`deeploy_core.lowering.qdq`) looks for ``DequantizeLinear(integer
constant)`` behind Conv/MatMul/Gemm, and constant folding runs only after it.
This pass evaluates those chains here, with ONNX's own definitions
(``QuantizeLinear``: ``x / scale`` in float32, rounded half to even, plus the
zero point, saturated; ``Clip``: ``min(max(x, low), high)``), so the
``DequantizeLinear`` reads the folded integers directly.  Chains on
activations (``QuantizeLinear → Clip → DequantizeLinear`` of a variable) are
left to the QDQ rewrite, which folds the Clip into its output range.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs
from onnx import helper

from deeploy_core.lowering.graph_edits import Namer, constant_value, is_op, new_constant
from deeploy_core.passes import Modifies, Pass


def quantize_linear(x: np.ndarray, scale: np.ndarray, zero: np.ndarray, axis: int) -> np.ndarray:
    """ONNX ``QuantizeLinear`` on a constant, per tensor or along ``axis`` (float32 division, ties to even)."""
    data = np.asarray(x, np.float32)
    scale32 = np.asarray(scale, np.float32)
    zero_array = np.asarray(zero)
    if scale32.ndim == 1 and scale32.size > 1 or zero_array.ndim == 1 and zero_array.size > 1:
        axis = axis % data.ndim
        shape = [1] * data.ndim
        shape[axis] = data.shape[axis]
        scale32 = scale32.reshape(-1).reshape(shape) if scale32.size > 1 else scale32.reshape(())
        zero_array = zero_array.reshape(-1).reshape(shape) if zero_array.size > 1 else zero_array.reshape(())
    info = np.iinfo(zero_array.dtype)
    rounded = np.round(data / scale32).astype(np.float64) + zero_array.astype(np.float64)
    return np.clip(rounded, info.min, info.max).astype(zero_array.dtype)


def _bounds(clip: gs.Node, dtype: np.dtype) -> tuple[Any, Any] | None:
    """The constant (low, high) of an integer Clip; absent inputs are the type's limits, None if not constant."""
    info = np.iinfo(dtype)
    bounds = []
    for index, default in ((1, info.min), (2, info.max)):
        if len(clip.inputs) <= index or not clip.inputs[index].name:
            bounds.append(default)
            continue
        value = constant_value(clip.inputs[index])
        if value is None or value.size != 1:
            return None
        bounds.append(value.reshape(-1)[0])
    return bounds[0], bounds[1]


def _folded_source(clip: gs.Node) -> np.ndarray | None:
    """The integers the Clip outputs when its input is constant (directly or through a QuantizeLinear)."""
    source = clip.inputs[0]
    value = constant_value(source)
    if value is None and len(source.inputs) == 1 and is_op(source.inputs[0], "QuantizeLinear"):
        value = _quantised_constant(source.inputs[0])
    if value is None or not np.issubdtype(value.dtype, np.integer):
        return None
    bounds = _bounds(clip, value.dtype)
    if bounds is None:
        return None
    return np.clip(value, bounds[0], bounds[1]).astype(value.dtype)


def _quantised_constant(node: gs.Node) -> np.ndarray | None:
    """A QuantizeLinear of a constant, evaluated (None when any of its inputs is not constant)."""
    values = [constant_value(tensor) if tensor.name else None for tensor in node.inputs]
    data, scale = (values[0], values[1]) if len(values) >= 2 else (None, None)
    if data is None or scale is None:
        return None
    if len(values) < 3 or values[2] is None:
        if len(node.inputs) >= 3 and node.inputs[2].name:
            return None  # a zero point computed at run time
        output_dtype = int(node.attrs.get("output_dtype", 0))  # opset 21: the type without a zero point
        zero = np.zeros((), helper.tensor_dtype_to_np_dtype(output_dtype) if output_dtype else np.uint8)
    else:
        zero = values[2]
    if not np.issubdtype(np.asarray(zero).dtype, np.integer) or node.attrs.get("block_size", 0):
        return None  # float8 and blocked quantisation are not QCDQ weights
    return quantize_linear(data, scale, zero, int(node.attrs.get("axis", 1)))


def fold_qcdq_constants(graph: gs.Graph) -> int:
    """Fold every constant ``[QuantizeLinear →] Clip → DequantizeLinear`` and ``QuantizeLinear → DQ``.

    Returns how many DequantizeLinear inputs became folded constants.
    """
    namer: Namer | None = None
    folded = 0
    for node in list(graph.nodes):
        if not is_op(node, "DequantizeLinear") or not node.inputs:
            continue
        source = node.inputs[0]
        if isinstance(source, gs.Constant) or len(source.inputs) != 1:
            continue
        producer = source.inputs[0]
        if is_op(producer, "Clip"):
            value = _folded_source(producer)
        elif is_op(producer, "QuantizeLinear"):
            value = _quantised_constant(producer)
        else:
            continue
        if value is None:
            continue
        namer = namer or Namer(graph)
        stem = producer.name or source.name
        node.inputs[0] = new_constant(namer, f"{stem}_folded", value)
        folded += 1
    if folded:
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
    return folded


class FoldQcdqConstants(Pass[gs.Graph]):
    """Fold QCDQ weight chains into integer constants (see the module docstring); returns how many."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        return fold_qcdq_constants(graph) or None
