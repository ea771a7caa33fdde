"""Removing ``Identity`` nodes before anything matches patterns.

Exporters and quantisers leave Identity nodes in the middle of patterns:
ONNX Runtime's ``quantize_static`` routes a shared bias through
``DequantizeLinear → Identity → Conv`` (18 of SqueezeNet 1.1's 26 convolutions),
which hid those convolutions from the QDQ fusion, so exact mode dequantised
their weights into the arena (2.77 MB against 127 kB for the float model).
ONNX Runtime itself drops Identity nodes before its QDQ fusions, so both our
lowering and the validation reference do the same.  An Identity whose output is
a graph output stays (its name is the network's interface); it costs nothing,
since Identity is a view.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.passes import Modifies, Pass


def remove_identities(graph: gs.Graph) -> int:
    """Rewire every consumer of a removable Identity to its input; returns how many were removed."""
    outputs = {id(tensor) for tensor in graph.outputs}
    removed = 0
    for node in list(graph.nodes):
        if node.op != "Identity" or node.domain not in (None, "", "ai.onnx"):
            continue
        if len(node.inputs) != 1 or len(node.outputs) != 1 or id(node.outputs[0]) in outputs:
            continue
        source, target = node.inputs[0], node.outputs[0]
        for consumer in list(target.outputs):
            for index, tensor in enumerate(consumer.inputs):
                if tensor is target:
                    consumer.inputs[index] = source
        node.inputs.clear()
        node.outputs.clear()
        removed += 1
    if removed:
        graph.cleanup(remove_unused_graph_inputs=False)
    return removed


class RemoveIdentity(Pass[gs.Graph]):
    """Drop Identity nodes (see the module docstring); returns the number removed."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        return remove_identities(graph) or None
