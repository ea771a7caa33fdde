"""Fixed-point mode for standard QDQ models: DequantizeLinear → op → QuantizeLinear becomes an integer op.

In exact mode a QDQ model runs as written (dequantise, float op, quantise),
which reproduces ONNX Runtime bit for bit but needs an FPU.  Fixed-point mode
rewrites every quantised island it recognises:

* compute ops become the standard QLinear operators (``QLinearConv``,
  ``QLinearMatMul``; ``QGemm``, ``QLinearAdd``, ``QLinearMul``,
  ``QLinearAveragePool``, ``QLinearGlobalAveragePool`` from ``com.microsoft``),
  whose kernels accumulate in int32 and requantise with a fixed-point
  multiplier and shift;
* ops that only move or select values (MaxPool, Reshape, Transpose, Concat, …)
  run directly on the integers when their input and output share one scale and
  zero point, which is how quantizers emit them.

What is left (Softmax, LayerNormalization, islands with unusual parameters)
keeps its float fallback, and the pass reports how many layers went integer.
The pass runs before constant folding, while the int8 weights are still
visible behind their DequantizeLinear nodes.

Exact mode runs :class:`QDQToIntegerExact`, the same rewrite restricted to
Conv, MatMul and Gemm and marked ``requantization="float32"``: those layers
then compute what ONNX Runtime's own QDQ fusion computes (QLinearConv,
QLinearMatMul, QGemm on its CPU provider): an int32 accumulation of
``(x - zx)(w - zw)`` plus the int32 bias, multiplied in float32 by the
float32 scale ``(sx · sw) / sy``, rounded half to even and saturated.  A
float convolution of dequantised values would instead depend on the order in
which the float products are summed, and round differently on ties.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

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
}
"""Float op → (integer op, domain)."""

VALUE_PRESERVING = frozenset(
    {"MaxPool", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Slice", "Gather", "Identity"}
)
"""Ops whose outputs are a selection of their inputs: exact on integers when the quantisation is shared.

(GlobalMaxPool is one too, but platforms have no integer kernel for it: it keeps its float fallback.)"""

WEIGHT_AXIS = {"Conv": 0, "MatMul": 1}


def _producer(tensor: gs.Tensor, op: str) -> gs.Node | None:
    if isinstance(tensor, gs.Constant) or len(tensor.inputs) != 1 or tensor.inputs[0].op != op:
        return None
    return tensor.inputs[0]


def _parameters(node: gs.Node) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, zero point) of a Q/DQ node, or None when they are not constants."""
    if len(node.inputs) < 2 or not isinstance(node.inputs[1], gs.Constant):
        return None
    if len(node.inputs) > 2 and node.inputs[2].name and not isinstance(node.inputs[2], gs.Constant):
        return None
    scale = np.asarray(node.inputs[1].values)
    zero = np.asarray(node.inputs[2].values) if len(node.inputs) > 2 and node.inputs[2].name else np.zeros((), np.uint8)
    return scale, zero


def _per_tensor(node: gs.Node) -> bool:
    parameters = _parameters(node)
    return parameters is not None and all(p.size == 1 for p in parameters)


def _same_quantisation(a: gs.Node, b: gs.Node) -> bool:
    pa, pb = _parameters(a), _parameters(b)
    return (pa is not None and pb is not None and _per_tensor(a) and _per_tensor(b)
            and np.array_equal(pa[0], pb[0]) and np.array_equal(pa[1], pb[1]) and pa[1].dtype == pb[1].dtype)


def _sole_consumer(tensor: gs.Tensor, graph: gs.Graph) -> gs.Node | None:
    if tensor in graph.outputs or len(tensor.outputs) != 1:
        return None
    return tensor.outputs[0]


def _qdq_inputs(node: gs.Node) -> list[gs.Node | None]:
    """The DequantizeLinear producing each data input (None for absent/non-DQ inputs)."""
    return [_producer(t, "DequantizeLinear") if t.name else None for t in node.inputs]


FLOAT_REQUANTIZED = frozenset({"Conv", "MatMul", "Gemm"})
"""Ops exact mode fuses: ONNX Runtime fuses them too and requantises their int32 accumulator in float32."""


class QDQToInteger(SubgraphTransformation):
    """Rewrite quantised islands (DQ → op → Q) into integer-only operators."""

    ops: frozenset[str] | None = None
    """The float ops rewritten (None: every one this module knows)."""
    requantization: str | None = None
    """Value of the fused nodes' ``requantization`` attribute (None: the kernels' fixed-point default)."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        for node in graph.nodes:
            if node.domain not in (None, "", "ai.onnx") or (node.op not in COMPUTE and node.op not in VALUE_PRESERVING):
                continue
            if len(node.outputs) != 1 or (self.ops is not None and node.op not in self.ops):
                continue
            quantize = _sole_consumer(node.outputs[0], graph)
            if quantize is None or quantize.op != "QuantizeLinear":
                continue
            producers = [dq for dq in _qdq_inputs(node) if dq is not None]
            yield Subgraph((node, quantize, *producers))

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        node, quantize = subgraph.nodes[:2]
        dequantized = _qdq_inputs(node)
        if not _per_tensor(quantize):
            return False
        if node.op in VALUE_PRESERVING:
            data = dequantized if node.op == "Concat" else dequantized[:1]
            return all(dq is not None and _same_quantisation(dq, quantize) for dq in data)
        return self._compute_applies(node, dequantized)

    @staticmethod
    def _compute_applies(node: gs.Node, dequantized: list[gs.Node | None]) -> bool:
        arity = 1 if node.op in ("AveragePool", "GlobalAveragePool") else 2
        operands = [dq for dq in dequantized[:arity] if dq is not None]
        if len(operands) != len(dequantized[:arity]) or any(_parameters(dq) is None for dq in operands) \
                or not _per_tensor(operands[0]):
            return False
        if node.op in ("Add", "Mul"):
            return _per_tensor(operands[1])
        if node.op == "MatMul" and not _matrices_with_shared_batch(node):
            return False
        if node.op == "AveragePool" and not _full_area_windows(node):
            return False
        if node.op == "Gemm" and (int(node.attrs.get("transA", 0)) or float(node.attrs.get("alpha", 1.0)) != 1.0
                                  or float(node.attrs.get("beta", 1.0)) != 1.0):
            return False
        if arity == 2 and not _per_tensor(operands[1]):
            axis = int(operands[1].attrs.get("axis", 1)) % max(len(operands[1].inputs[0].shape or (0,)), 1)
            expected = WEIGHT_AXIS.get(node.op, 0 if int(node.attrs.get("transB", 0)) else 1)
            if axis != expected:
                return False
        if len(node.inputs) > 2 and node.inputs[2].name:
            return _bias_applies(node.inputs[2], operands)
        return True

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        node, quantize = subgraph.nodes[:2]
        dequantized = _qdq_inputs(node)
        if node.op in VALUE_PRESERVING:
            for index, dq in enumerate(dequantized):
                if dq is not None:
                    node.inputs[index] = dq.inputs[0]
            node.outputs[0] = quantize.outputs[0]
            quantize.outputs.clear()
            return
        op, domain = COMPUTE[node.op]
        arity = 1 if node.op in ("AveragePool", "GlobalAveragePool") else 2
        inputs: list[gs.Tensor] = []
        for dq in dequantized[:arity]:
            inputs.extend(_operand_tensors(dq))
        if node.op == "Gemm":  # QGemm's C comes before y_scale: an absent bias still takes its (empty) slot
            has_bias = len(node.inputs) > 2 and bool(node.inputs[2].name)
            inputs.append(_bias_values(dequantized) if has_bias else gs.Variable.empty())
        inputs.extend(_operand_tensors(quantize)[1:])
        if node.op == "Conv" and len(node.inputs) > 2 and node.inputs[2].name:
            inputs.append(_bias_values(dequantized))
        attrs = {k: v for k, v in node.attrs.items() if k != "beta"}
        if self.requantization is not None:
            attrs["requantization"] = self.requantization
        fused = gs.Node(op, name=f"{node.name}_integer", attrs=attrs, inputs=inputs, outputs=[quantize.outputs[0]])
        fused.domain = domain or None
        node.outputs.clear()
        quantize.outputs.clear()
        graph.nodes.append(fused)

    def report(self, result: Any) -> str | None:
        return f"{result} quantised layers now integer-only" if result else None


class QDQToIntegerExact(QDQToInteger):
    """Exact mode: DQ → Conv/MatMul/Gemm → Q as ONNX Runtime's fused kernels compute it (float32 requantisation)."""

    ops: frozenset[str] | None = FLOAT_REQUANTIZED
    requantization: str | None = "float32"


def _operand_tensors(qdq: gs.Node) -> list[gs.Tensor]:
    """(tensor, scale, zero point) of a Q/DQ node; a missing zero point becomes an explicit 0 of the tensor type."""
    zero = qdq.inputs[2] if len(qdq.inputs) > 2 and qdq.inputs[2].name else gs.Constant(
        f"{qdq.name}_zero_point", np.zeros((), np.uint8))
    return [qdq.inputs[0] if qdq.op == "DequantizeLinear" else qdq.outputs[0], qdq.inputs[1], zero]


def _bias_values(dequantized: list[gs.Node | None]) -> gs.Tensor:
    """The int32 constant behind the bias's DequantizeLinear, which :meth:`can_be_applied` found there."""
    bias = dequantized[2]
    if bias is None:
        raise ValueError("the bias of a fused QDQ node has no DequantizeLinear producer")
    return bias.inputs[0]


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
    dq = _producer(bias, "DequantizeLinear")
    if dq is None or not isinstance(dq.inputs[0], gs.Constant) or np.asarray(dq.inputs[0].values).dtype != np.int32:
        return False
    parameters = _parameters(dq)
    if parameters is None or np.any(parameters[1] != 0):
        return False
    if not np.any(np.asarray(dq.inputs[0].values)):
        return True  # a zero bias is zero at any scale (exporters share one zero bias among layers of other scales)
    scales = [np.asarray(found[0], np.float64) for found in map(_parameters, operands) if found is not None]
    if len(scales) != 2:
        return False
    x_scale, w_scale = scales
    expected = (x_scale.reshape(-1)[0] * w_scale.reshape(-1)).astype(np.float32)
    return bool(np.allclose(np.asarray(parameters[0], np.float32).reshape(-1), expected, rtol=1e-6, atol=0))
