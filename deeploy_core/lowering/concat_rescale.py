"""A Concat of differently quantised tensors as per-input rescales and an integer Concat.

ONNX Runtime's quantizer (and SqueezeNet-style fire modules) write
``DQ(a; s_a) , DQ(b; s_b) → Concat → Q(s_y)``: every element is
``Q_y(DQ_i(x))``, a function of that element alone.  Inserting ``Q_y → DQ_y``
after each differently quantised input changes no value (``Q_y(DQ_y(q)) = q``)
and leaves two islands the later passes know: ``DQ_i → Q_y``, a rescale that
:class:`~deeploy_core.lowering.quantized_lookup.QuantizedLookup` turns into a
table (in exact mode ONNX Runtime's own ``DQ_i → Q_y``, so bit-exact), and a
Concat whose inputs share the output's quantisation, which
:class:`~deeploy_core.lowering.qdq.QDQToInteger` runs on the integers.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.lowering.qdq_islands import parameters, per_tensor, producer, same_quantisation, sole_consumer
from deeploy_core.passes import Modifies, Subgraph, SubgraphTransformation

EIGHT_BIT = (np.dtype(np.int8), np.dtype(np.uint8))


def _eight_bit_per_tensor(node: gs.Node) -> bool:
    found = parameters(node)
    return found is not None and per_tensor(node) and found[1].dtype in EIGHT_BIT


class RescaleConcatInputs(SubgraphTransformation):
    """Give every input of a quantised Concat the Concat's output quantisation (see the module doc)."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        for node in graph.nodes:
            if node.op != "Concat" or node.domain not in (None, "", "ai.onnx") or len(node.outputs) != 1:
                continue
            quantize = sole_consumer(node.outputs[0], graph)
            if quantize is not None and quantize.op == "QuantizeLinear" and quantize.inputs[0] is node.outputs[0]:
                yield Subgraph((node, quantize))

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        node, quantize = subgraph.nodes
        sources = [producer(tensor, "DequantizeLinear") for tensor in node.inputs]
        if not _eight_bit_per_tensor(quantize) or any(dq is None or not _eight_bit_per_tensor(dq) for dq in sources):
            return False
        return not all(dq is not None and same_quantisation(dq, quantize) for dq in sources)

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        node, quantize = subgraph.nodes
        zero = quantize.inputs[2]
        for index, tensor in enumerate(list(node.inputs)):
            source = producer(tensor, "DequantizeLinear")
            assert source is not None, "can_be_applied checked every input"
            if same_quantisation(source, quantize):
                continue
            stem = f"{node.outputs[0].name}_in{index}"  # node names need not be unique
            value = gs.Variable(f"{stem}_dequantized", dtype=np.float32, shape=tensor.shape)
            rescaled = gs.Variable(f"{stem}_rescaled", dtype=quantize.outputs[0].dtype, shape=tensor.shape)
            shared = gs.Variable(f"{stem}_shared", dtype=np.float32, shape=tensor.shape)
            graph.nodes.extend([
                gs.Node("DequantizeLinear", name=f"{stem}_dq", inputs=list(source.inputs), outputs=[value]),
                gs.Node("QuantizeLinear", name=f"{stem}_rescale", inputs=[value, quantize.inputs[1], zero],
                        outputs=[rescaled]),
                gs.Node("DequantizeLinear", name=f"{stem}_shared_dq", inputs=[rescaled, quantize.inputs[1], zero],
                        outputs=[shared]),
            ])
            node.inputs[index] = shared

    def report(self, result: Any) -> str | None:
        return f"{result} Concat inputs rescaled to the output's quantisation" if result else None
