"""Folding constant subgraphs before anything is mapped.

``Constant`` nodes and computations on constants only (shape arithmetic,
reshaped weights) become initializers, so platforms never need kernels for
them.  onnx-graphsurgeon does the folding (with ONNX Runtime); this pass only
reports whether the graph changed.

A graph output whose value folds to a constant (``Shape`` of a static input,
a ``Constant`` node, ``Identity`` of a weight) would otherwise be produced by
no node: onnx-graphsurgeon turns the output tensor itself into a constant.
The network still has to write it into the user's output buffer, so the
value is kept as an initializer of its own and an ``Identity`` copies it to
the output (an output that views a constant, which code generation copies).
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.lowering.empty_outputs import empty_outputs_to_constants
from deeploy_core.lowering.static_shape_nodes import fold_static_shape_nodes
from deeploy_core.passes import Modifies, Pass


def materialise_constant_outputs(graph: gs.Graph) -> int:
    """Give every graph output that folded to a constant a producing ``Identity``; returns how many."""
    names = {tensor.name for tensor in graph.tensors().values()}
    bridged = 0
    for position, output in enumerate(graph.outputs):
        if not isinstance(output, gs.Constant):
            continue
        value_name = _unused_name(f"{output.name}__value", names)
        names.add(value_name)
        value = gs.Constant(value_name, output.values)
        for consumer in list(output.outputs):  # other nodes may read the folded output too: they read the value
            for index, tensor in enumerate(consumer.inputs):
                if tensor is output:
                    consumer.inputs[index] = value
        target = gs.Variable(output.name, dtype=output.values.dtype, shape=list(output.values.shape))
        graph.nodes.append(gs.Node("Identity", name=_unused_name(f"{output.name}__materialise", names),
                                   inputs=[value], outputs=[target]))
        graph.outputs[position] = target
        bridged += 1
    return bridged


def _unused_name(name: str, taken: set[str]) -> str:
    candidate, suffix = name, 1
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    return candidate


class FoldConstants(Pass[gs.Graph]):
    """Replace constant subgraphs with their values; returns the number of nodes removed."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        before = len(graph.nodes)
        empty_outputs_to_constants(graph)  # their value is known whatever the inputs: nothing
        fold_static_shape_nodes(graph)  # before onnx-graphsurgeon, which ignores Shape's start/end
        graph.fold_constants(fold_shapes=True, partitioning=None, error_ok=False, size_threshold=None)
        materialise_constant_outputs(graph)
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
        removed = before - len(graph.nodes)
        return removed or None
