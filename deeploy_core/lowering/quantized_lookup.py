"""Quantised element-wise layers (DequantizeLinear → f → QuantizeLinear on 8-bit tensors) as table lookups.

Runs after :class:`~deeploy_core.lowering.qdq.QDQToInteger`, on what it left:
TFLite's int8 Logistic, Tanh, HardSwish, LeakyRelu and its rescaling QUANTIZE
(a DequantizeLinear straight into a QuantizeLinear of other parameters).
Each becomes ``IntegerLookup(x, table)``: a 256-entry constant of the output
type indexed by ``x - min(x's type)``, computed by
:mod:`deeploy_core.lowering.lookup_tables` in the mode's arithmetic.  The
layer then costs one load per value and 256 bytes of weights, and keeps no
float tensor in the arena.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.lowering.lookup_tables import (
    FLOAT64_FUNCTIONS,
    model_attributes,
    onnx_runtime_table,
    tflite_table,
)
from deeploy_core.lowering.qdq_islands import parameters, per_tensor, producer, sole_consumer
from deeploy_core.passes import Modifies, Subgraph, SubgraphTransformation

LOOKUP_OP = "IntegerLookup"
"""The dialect op a table lookup becomes: inputs (x, table[256]); output shaped like x, typed like the table;
attribute ``arithmetic`` ("float32" or "tflite") says whose arithmetic computed the table, for the report."""
EIGHT_BIT = (np.dtype(np.int8), np.dtype(np.uint8))


class QuantizedLookup(SubgraphTransformation):
    """Rewrite DQ → [element-wise op] → Q on 8-bit per-tensor quantisation into :data:`LOOKUP_OP`."""

    def __init__(self, arithmetic: str = "float32") -> None:
        if arithmetic not in ("float32", "tflite"):
            raise ValueError(f"unknown arithmetic {arithmetic!r}")
        self.arithmetic = arithmetic

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        for quantize in graph.nodes:
            if quantize.op != "QuantizeLinear" or quantize.domain not in (None, "", "ai.onnx"):
                continue
            source = quantize.inputs[0]
            dequantize = producer(source, "DequantizeLinear")
            if dequantize is not None:
                if sole_consumer(source, graph) is quantize:
                    yield Subgraph((quantize, dequantize))
                continue
            if len(source.inputs) != 1 or sole_consumer(source, graph) is not quantize:
                continue
            op = source.inputs[0]
            if op.op not in FLOAT64_FUNCTIONS or op.domain not in (None, "", "ai.onnx") or len(op.outputs) != 1:
                continue
            dequantize = producer(op.inputs[0], "DequantizeLinear") if op.inputs else None
            if dequantize is not None and sole_consumer(op.inputs[0], graph) is op:
                yield Subgraph((quantize, dequantize, op))

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        quantize, dequantize = subgraph.nodes[:2]
        if not (per_tensor(quantize) and per_tensor(dequantize)):
            return False
        found = [parameters(quantize), parameters(dequantize)]
        if any(p is None or p[1].dtype not in EIGHT_BIT for p in found):
            return False
        op = subgraph.nodes[2] if len(subgraph.nodes) > 2 else None
        if op is not None and len(op.inputs) != 1:  # e.g. Clip's run-time bounds, PRelu's slope tensor
            return False
        return isinstance(dequantize.inputs[0], gs.Variable)  # a constant's island is folded, not looked up

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        quantize, dequantize = subgraph.nodes[:2]
        op = subgraph.nodes[2] if len(subgraph.nodes) > 2 else None
        x_found, y_found = parameters(dequantize), parameters(quantize)
        assert x_found is not None and y_found is not None, "can_be_applied checked them"
        x_scale, x_zero = np.float32(x_found[0].reshape(-1)[0]), x_found[1].reshape(())
        y_scale, y_zero = np.float32(y_found[0].reshape(-1)[0]), y_found[1].reshape(())
        attributes = model_attributes(dict(op.attrs)) if op is not None else {}
        if self.arithmetic == "float32":
            table = onnx_runtime_table(op.op if op else None, attributes, x_scale, x_zero, y_scale, y_zero)
        else:
            table = tflite_table(op.op if op else None, {k: float(v) for k, v in attributes.items()
                                                          if isinstance(v, (int, float))},
                                 x_scale, x_zero, y_scale, y_zero)
        name = (op or quantize).name or quantize.outputs[0].name
        lookup = gs.Node(LOOKUP_OP, name=f"{name}_lookup", attrs={"arithmetic": self.arithmetic},
                         inputs=[dequantize.inputs[0], gs.Constant(f"{name}_table", np.ascontiguousarray(table))],
                         outputs=[quantize.outputs[0]])
        quantize.outputs.clear()
        graph.nodes.append(lookup)

    def report(self, result: Any) -> str | None:
        return f"{result} quantised element-wise layers now table lookups" if result else None
