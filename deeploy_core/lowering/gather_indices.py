"""Constant ``Gather`` indices of any integer type become int64.

ONNX lets ``Gather`` take int32 or int64 indices; the platforms' Gather kernels
read int64.  A TensorFlow loop counter is int32, so after a Keras recurrent
layer's ``Loop`` is unrolled (:mod:`deeploy_core.frontend.loop_unroll`) each
time step reads its input by ``Gather(x, time)`` with ``time`` an int32 that
constant folding has turned into a constant.  Widening a constant index to
int64 changes no value (negative indices count from the end in both), so the
kernel that exists serves it.  Indices computed at run time are left as they
are.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.passes import Modifies, Pass


def widen_gather_indices(graph: gs.Graph) -> int:
    """Replace each constant non-int64 integer index tensor of a Gather by an int64 copy; returns how many."""
    widened = 0
    for node in graph.nodes:
        if node.op != "Gather" or node.domain not in (None, "", "ai.onnx") or len(node.inputs) != 2:
            continue
        indices = node.inputs[1]
        if not isinstance(indices, gs.Constant):
            continue
        values = np.asarray(indices.values)
        if values.dtype == np.int64 or not np.issubdtype(values.dtype, np.integer):
            continue
        node.inputs[1] = gs.Constant(f"{indices.name}_int64", values.astype(np.int64))
        widened += 1
    return widened


class WidenGatherIndices(Pass[gs.Graph]):
    """Make constant Gather indices int64 (see the module docstring); returns the number widened."""

    def modifies(self) -> Modifies:
        return Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        return widen_gather_indices(graph) or None
