"""QDQ models to integer layers: every quantised island becomes one integer-in, integer-out operator.

A QDQ model writes each quantised layer as float arithmetic between
DequantizeLinear and QuantizeLinear (the shapes exporters use are in
:mod:`deeploy_core.lowering.qdq_islands`).  Run as written, every layer would
keep float tensors in the arena and float weights in flash.  This pass fuses
each island it recognises into one operator on the integer tensors:

* compute ops become the standard QLinear operators (``QLinearConv``,
  ``QLinearMatMul``; ``QGemm`` — also for tf2onnx's MatMul + bias Add —,
  ``QLinearAdd``, ``QLinearMul``, ``QLinearAveragePool``,
  ``QLinearGlobalAveragePool``, ``QLinearSoftmax`` from ``com.microsoft``),
  with the int8 weights and int32 biases behind the DequantizeLinear nodes as
  their constant inputs (the float copies disappear with the DQ nodes);
* a Relu or Clip between the op and its QuantizeLinear, and a QCDQ Clip after
  it, become the fused node's ``output_min``/``output_max`` clamp
  (:mod:`deeploy_core.lowering.quantized_bounds`);
* ops that only move or select values (MaxPool, Reshape, Transpose, Concat, …)
  run directly on the integers when their input and output share one scale
  and zero point.

The ``requantization`` attribute says whose arithmetic the kernels reproduce:
``"float32"`` in exact mode (ONNX Runtime's: fused Conv/MatMul/Gemm requantise
the int32 accumulator in float32 like its QLinear kernels — or, with a float
bias ONNX Runtime leaves unfused, dequantise it and add the bias in float32 —, the other ops
compute what its unfused float DequantizeLinear → op → QuantizeLinear
computes) and ``"tflite"`` in fixed-point mode (TFLite's reference int8
kernels, integer only).  Where TFLite's kernel does not exist for an island's
parameters (an average pool that rescales) fixed-point mode omits the
attribute and the platform's own fixed-point kernel runs; a Softmax without
TFLite's output quantisation keeps its float fallback.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.lowering.qdq_islands import (
    Island,
    constant_bounds,
    dequantized_inputs,
    find_island,
    parameters,
    per_tensor,
    producer,
    same_quantisation,
)
from deeploy_core.lowering.quantized_bounds import activation_range
from deeploy_core.passes import Modifies, Subgraph, SubgraphTransformation

MICROSOFT = "com.microsoft"
COMPUTE = {
    "Conv": ("QLinearConv", ""),
    "MatMul": ("QLinearMatMul", ""),
    "Gemm": ("QGemm", MICROSOFT),
    "Add": ("QLinearAdd", MICROSOFT),
    "Mul": ("QLinearMul", MICROSOFT),
    "AveragePool": ("QLinearAveragePool", MICROSOFT),
    "GlobalAveragePool": ("QLinearGlobalAveragePool", MICROSOFT),
    "Softmax": ("QLinearSoftmax", MICROSOFT),
}
"""Float op → (integer op, domain)."""

UNARY = frozenset({"AveragePool", "GlobalAveragePool", "Softmax"})
"""Compute ops with one quantised operand."""

VALUE_PRESERVING = frozenset(
    {"MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Gather", "Identity"}
)
"""Ops whose outputs are a selection of their inputs: exact on integers when the quantisation is shared.

(GlobalMaxPool is one too, but platforms have no integer kernel for it: it keeps its float fallback.)"""

FLOAT_REQUANTIZED = frozenset({"Conv", "MatMul", "Gemm"})
"""Ops ONNX Runtime itself fuses (requantising their int32 accumulator in float32); the validation reference
fuses exactly these."""

WEIGHT_AXIS = {"Conv": 0, "MatMul": 1}
SOFTMAX_STEP = np.float32(1.0 / 256.0)
"""TFLite's int8 softmax writes probabilities in steps of 1/256 (zero point -128 for int8, 0 for uint8)."""


class QDQToInteger(SubgraphTransformation):
    """Rewrite quantised islands into integer operators computing in ``requantization``'s arithmetic."""

    ops: frozenset[str] | None = None
    """The float ops rewritten (None: every one this module knows)."""
    requantization: str | None = "tflite"
    """Whose arithmetic the fused nodes reproduce: "tflite" (fixed-point mode), "float32" (exact mode) or None
    (no attribute: standard nodes for ONNX Runtime itself, see :mod:`~deeploy_core.lowering.qdq_reference`)."""
    absorb_clip: bool = True
    """Fold a QCDQ integer Clip after the QuantizeLinear into the clamp."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        for node in graph.nodes:
            if node.domain not in (None, "", "ai.onnx") or (node.op not in COMPUTE and node.op not in VALUE_PRESERVING):
                continue
            if self.ops is not None and node.op not in self.ops:
                continue
            island = find_island(node, graph, self.absorb_clip and node.op not in VALUE_PRESERVING)
            if island is None or (node.op in VALUE_PRESERVING and (island.activation or island.bias_add)):
                continue
            producers = [dq for dq in dequantized_inputs(node) if dq is not None]
            yield Subgraph((*island.nodes, *producers))

    def _island(self, graph: gs.Graph, subgraph: Subgraph) -> Island:
        island = find_island(subgraph.nodes[0], graph, self.absorb_clip and subgraph.nodes[0].op not in VALUE_PRESERVING)
        assert island is not None, "find_candidates matched it"
        return island

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        island = self._island(graph, subgraph)
        node, quantize = island.node, island.quantize
        dequantized = dequantized_inputs(node)
        if not per_tensor(quantize) or (island.clip is not None and not _integer_clip(island.clip)):
            return False
        if node.op in VALUE_PRESERVING:
            data = dequantized if node.op == "Concat" else dequantized[:1]
            return all(dq is not None and same_quantisation(dq, quantize) for dq in data)
        if island.bias_add is not None and not self._bias_add_applies(island):
            return False
        if node.op == "Softmax" and not self._softmax_applies(node, quantize):
            return False
        if node.op == "AveragePool" and not self._pool_applies(island):
            return False
        return _compute_applies(node, dequantized, float_bias=self.requantization in ("tflite", "float32"))

    def _pool_applies(self, island: Island) -> bool:
        """No ``ceil_mode``; padding left out of the count (TFLite's SAME) only where the kernels divide by the
        in-bounds pixels: the float32 and TFLite arithmetics do, the platforms' own fixed-point kernel does not."""
        if int(island.node.attrs.get("ceil_mode", 0)):
            return False
        return self._arithmetic(island) is not None or _full_area_windows(island.node)

    def _softmax_applies(self, node: gs.Node, quantize: gs.Node) -> bool:
        """Along the last axis only; fixed-point mode only with TFLite's output quantisation."""
        shape = node.inputs[0].shape
        if shape is None or int(node.attrs.get("axis", -1)) % len(shape) != len(shape) - 1:
            return False
        if self.requantization != "tflite":
            return True
        found = parameters(quantize)
        assert found is not None, "per_tensor checked it"
        scale, zero = found
        expected_zero = -128 if zero.dtype == np.int8 else 0
        return bool(np.float32(scale.reshape(-1)[0]) == SOFTMAX_STEP and int(zero.reshape(-1)[0]) == expected_zero)

    @staticmethod
    def _bias_add_applies(island: Island) -> bool:
        """tf2onnx's Dense: a 2-D MatMul whose Add adds an int32 bias over the output columns."""
        node, bias = island.node, island.bias_dequantize
        shapes = [node.inputs[0].shape, node.outputs[0].shape]
        if bias is None or any(shape is None or len(shape) != 2 for shape in shapes):
            return False
        operands = [dq for dq in dequantized_inputs(node)[:2] if dq is not None]
        return len(operands) == 2 and _bias_applies(bias.outputs[0], operands)

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        island = self._island(graph, subgraph)
        node, quantize = island.node, island.quantize
        dequantized = dequantized_inputs(node)
        if node.op in VALUE_PRESERVING:
            for index, dq in enumerate(dequantized):
                if dq is not None:
                    node.inputs[index] = dq.inputs[0]
            node.outputs[0] = quantize.outputs[0]
            quantize.outputs.clear()
            return
        op, domain = ("QGemm", MICROSOFT) if island.bias_add is not None else COMPUTE[node.op]
        inputs: list[gs.Tensor] = []
        for dq in dequantized[:1 if node.op in UNARY else 2]:
            assert dq is not None, "can_be_applied checked the operands"
            inputs.extend(_operand_tensors(dq))
        if op == "QGemm":  # QGemm's C comes before y_scale: an absent bias still takes its (empty) slot
            inputs.append(self._bias(node, island, dequantized))
        inputs.extend(_operand_tensors(quantize)[1:])
        if node.op == "Conv" and len(node.inputs) > 2 and node.inputs[2].name:
            inputs.append(self._bias(node, island, dequantized))
        attrs = self._attributes(island)
        fused = gs.Node(op, name=f"{node.name}_integer", attrs=attrs, inputs=inputs, outputs=[island.output])
        fused.domain = domain or None
        for member in island.nodes:
            member.outputs.clear()
        graph.nodes.append(fused)

    def _bias(self, node: gs.Node, island: Island, dequantized: list[gs.Node | None]) -> gs.Tensor:
        """The fused node's bias: the int32 behind a DequantizeLinear, else the exported float bias, quantised in
        fixed-point mode (:func:`_quantised_bias`) and kept float32 in exact mode, whose kernels add it in float as
        ONNX Runtime does; QGemm's empty slot when there is none."""
        if island.bias_add is not None:
            return _bias_values(island.bias_dequantize)
        if len(node.inputs) <= 2 or not node.inputs[2].name:
            return gs.Variable.empty()
        if dequantized[2] is not None:
            return _bias_values(dequantized[2])
        if self.requantization == "tflite":
            return _quantised_bias(node, dequantized)
        values = np.asarray(node.inputs[2].values, np.float32)
        return gs.Constant(f"{node.name}_bias_float32", values)

    def _attributes(self, island: Island) -> dict[str, Any]:
        """The op's own attributes, the arithmetic, and the clamp of a fused activation or QCDQ Clip."""
        node = island.node
        attrs: dict[str, Any] = {k: v for k, v in node.attrs.items() if k != "beta"}
        if island.bias_add is not None:
            attrs = {"transB": 0}
        if node.op == "Softmax":
            attrs = {"axis": -1, "opset": 13}
        requantization = self._arithmetic(island)
        if requantization is not None:
            attrs["requantization"] = requantization
        low, high = self._clamp(island, requantization or "float32")
        if low is not None:
            attrs["output_min"], attrs["output_max"] = low, high
        return attrs

    def _arithmetic(self, island: Island) -> str | None:
        """``requantization``, except where TFLite has no kernel for the island's parameters (see module doc)."""
        if self.requantization == "tflite" and island.node.op == "AveragePool":  # TFLite's MEAN rescales, this not
            source = dequantized_inputs(island.node)[0]
            if source is None or not same_quantisation(source, island.quantize):
                return None
        return self.requantization

    @staticmethod
    def _clamp(island: Island, arithmetic: str) -> tuple[int | None, int | None]:
        """(output_min, output_max) of the activation and the QCDQ Clip, or (None, None) when neither narrows."""
        found = parameters(island.quantize)
        assert found is not None, "per_tensor checked it"
        scale, zero = float(found[0].reshape(-1)[0]), int(found[1].reshape(-1)[0])
        info = np.iinfo(found[1].dtype)
        low, high = int(info.min), int(info.max)
        if island.activation is not None:
            bounds = constant_bounds(island.activation) if island.activation.op == "Clip" else (0.0, None)
            assert bounds is not None, "find_island checked the bounds"
            a, b = activation_range(island.activation.op, bounds, scale, zero, found[1].dtype, arithmetic)
            low, high = max(low, a), min(high, b)
        if island.clip is not None:
            bounds = constant_bounds(island.clip)
            assert bounds is not None, "find_island checked the bounds"
            if bounds[0] is not None:
                low = max(low, math.ceil(bounds[0]))
            if bounds[1] is not None:
                high = min(high, math.floor(bounds[1]))
        if (low, high) == (int(info.min), int(info.max)):
            return None, None
        return low, high

    def report(self, result: Any) -> str | None:
        return f"{result} quantised layers now integer-only" if result else None


class QDQToIntegerExact(QDQToInteger):
    """Exact mode: every island fused, computing what ONNX Runtime computes (``requantization="float32"``)."""

    requantization: str | None = "float32"


def _integer_clip(clip: gs.Node) -> bool:
    """A QCDQ Clip: integer data with constant bounds."""
    return clip.outputs[0].dtype is not None and np.issubdtype(np.dtype(clip.outputs[0].dtype), np.integer)


def _compute_applies(node: gs.Node, dequantized: list[gs.Node | None], float_bias: bool = False) -> bool:
    """The operands' quantisation and the op's attributes are what the integer kernels implement.

    ``float_bias``: a float constant bias (an exporter that does not quantise biases) is accepted: fixed-point
    mode quantises it to int32 (:func:`_quantised_bias`), exact mode's kernels add it in float32.
    """
    arity = 1 if node.op in UNARY else 2
    operands = [dq for dq in dequantized[:arity] if dq is not None]
    if len(operands) != len(dequantized[:arity]) or any(parameters(dq) is None for dq in operands) \
            or not per_tensor(operands[0]):
        return False
    if node.op in ("Add", "Mul"):
        return per_tensor(operands[1])
    if node.op == "MatMul" and not _matrices_with_shared_batch(node):
        return False
    if node.op == "Gemm" and (int(node.attrs.get("transA", 0)) or float(node.attrs.get("alpha", 1.0)) != 1.0
                              or float(node.attrs.get("beta", 1.0)) != 1.0):
        return False
    if arity == 2 and not per_tensor(operands[1]):
        axis = int(operands[1].attrs.get("axis", 1)) % max(len(operands[1].inputs[0].shape or (0,)), 1)
        expected = WEIGHT_AXIS.get(node.op, 0 if int(node.attrs.get("transB", 0)) else 1)
        if axis != expected:
            return False
    if len(node.inputs) > 2 and node.inputs[2].name:
        if float_bias and _float_constant(node.inputs[2]) and node.op in ("Conv", "Gemm"):
            channels = node.outputs[0].shape[1 if node.op == "Conv" else -1] if node.outputs[0].shape else None
            return np.asarray(node.inputs[2].values).shape == (channels,)
        return _bias_applies(node.inputs[2], operands)
    return True


def _operand_tensors(qdq: gs.Node) -> list[gs.Tensor]:
    """(tensor, scale, zero point) of a Q/DQ node; a missing zero point becomes an explicit 0 of the tensor type."""
    zero = qdq.inputs[2] if len(qdq.inputs) > 2 and qdq.inputs[2].name else gs.Constant(
        f"{qdq.name}_zero_point", np.zeros((), np.uint8))
    return [qdq.inputs[0] if qdq.op == "DequantizeLinear" else qdq.outputs[0], qdq.inputs[1], zero]


def _bias_values(bias: gs.Node | None) -> gs.Tensor:
    """The int32 constant behind a bias's DequantizeLinear, which :meth:`can_be_applied` found there."""
    if bias is None:
        raise ValueError("the bias of a fused QDQ node has no DequantizeLinear producer")
    return bias.inputs[0]


def _float_constant(tensor: gs.Tensor) -> bool:
    return isinstance(tensor, gs.Constant) and np.issubdtype(np.asarray(tensor.values).dtype, np.floating)


def _quantised_bias(node: gs.Node, dequantized: list[gs.Node | None]) -> gs.Constant:
    """A float bias as the int32 the kernels add: ``round(b / (s_x · s_w[c]))``, half away from zero.

    Exporters that cannot quantise biases (Brevitas with the dynamo exporter)
    leave them float.  TFLite's converter quantises a bias exactly this way
    (scale ``s_x · s_w`` in float32), so fixed-point mode, whose promise is
    integer-only arithmetic rather than ONNX Runtime's float bias, does too.
    Exact mode keeps the bias float32: its kernels add it to the dequantised
    int32 accumulator in float, as ONNX Runtime's unfused layer adds it.
    """
    found = [parameters(dq) for dq in dequantized[:2] if dq is not None]
    assert len(found) == 2 and all(f is not None for f in found), "can_be_applied checked the operands"
    x_scale = np.float32(found[0][0].reshape(-1)[0])  # type: ignore[index]
    w_scale = np.asarray(found[1][0], np.float32).reshape(-1)  # type: ignore[index]
    bias = np.asarray(node.inputs[2].values, np.float64).reshape(-1)
    scale = (x_scale * np.broadcast_to(w_scale, bias.shape)).astype(np.float64)
    ratio = bias / scale
    rounded = np.sign(ratio) * np.floor(np.abs(ratio) + 0.5)
    values = np.clip(rounded, -(2**31), 2**31 - 1).astype(np.int32)
    return gs.Constant(f"{node.name}_bias_int32", values)


def _matrices_with_shared_batch(node: gs.Node) -> bool:
    """Both operands are matrices whose batch dimensions are absent or those of the output.

    That is what QLinearMatMul kernels index; a 1-D operand (numpy's promotion)
    or a batch broadcast over some dimensions only keeps the float fallback.
    """
    shapes = [tensor.shape for tensor in (*node.inputs[:2], node.outputs[0])]
    if any(shape is None for shape in shapes) or min(len(shapes[0]), len(shapes[1])) < 2:
        return False
    batch = math.prod(shapes[2][:-2])
    return all(math.prod(shape[:-2]) in (1, batch) for shape in shapes[:2])


def _full_area_windows(node: gs.Node) -> bool:
    """Every window divides by the full kernel area, as QLinearAveragePool kernels do.

    Not so with ``ceil_mode`` (the last windows are cut short) or padding left
    out of the count (``count_include_pad=0`` with explicit or SAME padding):
    such pools keep the float fallback.
    """
    if int(node.attrs.get("ceil_mode", 0)):
        return False
    padded = any(int(p) for p in node.attrs.get("pads", [])) or \
        str(node.attrs.get("auto_pad", "NOTSET")) in ("SAME_UPPER", "SAME_LOWER")
    return not padded or bool(int(node.attrs.get("count_include_pad", 0)))


def _bias_applies(bias: gs.Tensor, operands: list[gs.Node]) -> bool:
    """A bias qualifies when it is int32 with zero point 0 and scale s_in · s_w, as quantizers emit it."""
    dq = producer(bias, "DequantizeLinear")
    if dq is None or not isinstance(dq.inputs[0], gs.Constant) or np.asarray(dq.inputs[0].values).dtype != np.int32:
        return False
    found = parameters(dq)
    if found is None or np.any(found[1] != 0):
        return False
    if not np.any(np.asarray(dq.inputs[0].values)):
        return True  # a zero bias is zero at any scale (exporters share one zero bias among layers of other scales)
    scales = [np.asarray(p[0], np.float64) for p in map(parameters, operands) if p is not None]
    if len(scales) != 2:
        return False
    x_scale, w_scale = scales
    expected = (x_scale.reshape(-1)[0] * w_scale.reshape(-1)).astype(np.float32)
    actual = np.asarray(found[0], np.float32).reshape(-1)
    return actual.size in (1, expected.size) and bool(np.allclose(actual, expected, rtol=1e-6, atol=0))
