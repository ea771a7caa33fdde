"""Folding constant subgraphs before anything is mapped.

``Constant`` nodes and computations on constants only (shape arithmetic,
reshaped weights) become initializers, so platforms never need kernels for
them.  onnx-graphsurgeon does the folding (with ONNX Runtime); this pass only
reports whether the graph changed.
"""

from __future__ import annotations

from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.passes import Modifies, Pass


class FoldConstants(Pass[gs.Graph]):
    """Replace constant subgraphs with their values; returns the number of nodes removed."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        before = len(graph.nodes)
        graph.fold_constants(fold_shapes=True, partitioning=None, error_ok=False, size_threshold=None)
        graph.cleanup(remove_unused_graph_inputs=False).toposort()
        removed = before - len(graph.nodes)
        return removed or None
