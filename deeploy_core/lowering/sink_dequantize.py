"""Moving a DequantizeLinear past the value-moving op that follows it, so the QDQ rewrite finds its islands.

Brevitas (QCDQ and QONNX alike) dequantises an activation as soon as it is
quantised and lets ``MaxPool``, ``Flatten`` or ``Reshape`` run on the float
values: ``Q → DQ → MaxPool → Conv``.  The QDQ rewrite looks for
``DQ → Conv → … → Q``, so a pool or a flatten between the DequantizeLinear and
the next layer hides that layer, and it stays float.  These ops commute with a
per-tensor dequantisation: a reshape moves values without changing them, and
``max`` of ``(q - z) · s`` is ``(max q - z) · s`` for a positive scale.  Moving
the DequantizeLinear after them therefore changes no value — ONNX Runtime
propagates its QDQ nodes the same way — and the op runs on the integers.
The move is made only where it uncovers a Conv, Gemm or MatMul; an op
followed by a QuantizeLinear (``DQ → MaxPool → Q``, as ONNX Runtime's
quantiser and tf2onnx write it) is left to the QDQ rewrite.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.lowering.graph_edits import Namer, constant_value, is_op, only_consumer
from deeploy_core.passes import Modifies, Pass

RESHAPING = frozenset({"Flatten", "Reshape"})
"""Ops that only move values: they commute with any per-tensor dequantisation."""
MONOTONE = frozenset({"MaxPool"})
"""Ops that select the largest value: they commute with a per-tensor dequantisation of positive scale."""
LAYERS = frozenset({"Conv", "Gemm", "MatMul"})
"""What the move must uncover: the op's results feed only such layers (or another op the move passes)."""


def _per_tensor(node: gs.Node) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, zero point) of a per-tensor DequantizeLinear with constant parameters, else None."""
    scale = constant_value(node.inputs[1]) if len(node.inputs) > 1 else None
    zero = constant_value(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2].name else np.zeros(())
    if scale is None or zero is None or scale.size != 1 or zero.size != 1:
        return None
    return scale, zero


def _integer_type(dequantize: gs.Node) -> Any:
    """The DequantizeLinear's input type (its zero point's when shape inference has not typed the input yet)."""
    if dequantize.inputs[0].dtype is not None:
        return dequantize.inputs[0].dtype
    zero = constant_value(dequantize.inputs[2]) if len(dequantize.inputs) > 2 and dequantize.inputs[2].name else None
    return zero.dtype if zero is not None else np.uint8


def _sinkable(dequantize: gs.Node, graph_outputs: set[int]) -> gs.Node | None:
    """The op the DequantizeLinear may move past, or None."""
    if not is_op(dequantize, "DequantizeLinear") or len(dequantize.outputs) != 1 or len(dequantize.inputs) < 2:
        return None
    source, target = dequantize.inputs[0], dequantize.outputs[0]
    if isinstance(source, gs.Constant) or id(target) in graph_outputs:
        return None  # constants are weights (the QDQ rewrite wants them as they are); outputs keep their producer
    consumer = only_consumer(target)
    if consumer is None or consumer.domain not in (None, "", "ai.onnx") or len(consumer.outputs) != 1:
        return None
    if consumer.op not in RESHAPING | MONOTONE or not consumer.inputs or consumer.inputs[0] is not target:
        return None
    if any(tensor is target for tensor in consumer.inputs[1:]):
        return None
    readers = consumer.outputs[0].outputs
    if not readers or not all(is_op(reader, reader.op) and reader.op in LAYERS | RESHAPING | MONOTONE
                              for reader in readers):
        return None  # nothing to uncover (DQ → op → Q is an island the QDQ rewrite already runs on the integers)
    parameters = _per_tensor(dequantize)
    if parameters is None or (consumer.op in MONOTONE and not float(parameters[0].reshape(-1)[0]) > 0):
        return None
    return consumer


def sink_dequantize(graph: gs.Graph) -> int:
    """Move every eligible DequantizeLinear past its value-moving consumer, repeatedly; returns the moves."""
    graph_outputs = {id(tensor) for tensor in graph.outputs}
    namer: Namer | None = None
    moved = 0
    changed = True
    while changed:
        changed = False
        for dequantize in list(graph.nodes):
            consumer = _sinkable(dequantize, graph_outputs)
            if consumer is None:
                continue
            namer = namer or Namer(graph)
            source, result = dequantize.inputs[0], consumer.outputs[0]
            dtype = _integer_type(dequantize)
            integers = gs.Variable(namer(f"{result.name}_quantized"), dtype=dtype, shape=result.shape)
            consumer.inputs[0] = source
            consumer.outputs[0] = integers
            dequantize.inputs[0] = integers
            dequantize.outputs[0] = result
            moved += 1
            changed = True
    if moved:
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
    return moved


class SinkDequantize(Pass[gs.Graph]):
    """Move DequantizeLinear past MaxPool/Flatten/Reshape (see the module docstring); returns the moves."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        return sink_dequantize(graph) or None
