"""Splitting float reductions over several axes so that a tiler can cut them.

A reduction keeps whole every axis it reduces, so ``ReduceMean`` over all axes
of a large tensor needs the whole tensor in the compute level at once.  Over
axes R = {r0} ∪ R', the mean (or sum) equals the reduction over r0 of the
reduction over R' with kept dimensions — the first stage still has r0 as an
output axis to tile along.  Exact for sums and for means (equal group sizes),
up to float rounding; integer reductions (Deeploy's rounding rule) are left
alone because re-association would change their results.  Used in tiled mode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.passes import Modifies, Pass

SPLITTABLE = ("ReduceMean", "ReduceSum")


def _reduced_axes(node: gs.Node, rank: int) -> list[int] | None:
    if len(node.inputs) > 1 and node.inputs[1].name:
        if not isinstance(node.inputs[1], gs.Constant):
            return None
        axes = [int(a) for a in np.asarray(node.inputs[1].values).reshape(-1)]
    else:
        axes = [int(a) for a in node.attrs.get("axes", [])]
    if not axes:
        return None if int(node.attrs.get("noop_with_empty_axes", 0)) else list(range(rank))
    return sorted({a % rank for a in axes})


class SplitReductions(Pass[gs.Graph]):
    """ReduceMean/ReduceSum over ≥ 2 non-unit float axes → inner reduction (keepdims) + outer reduction."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        split = 0
        for node in list(graph.nodes):
            if node.op not in SPLITTABLE or node.domain not in (None, "", "ai.onnx"):
                continue
            x = node.inputs[0]
            if x.shape is None or x.dtype is None or np.dtype(x.dtype).kind != "f":
                continue
            rank = len(x.shape)
            axes = _reduced_axes(node, rank)
            if axes is None:
                continue
            wide = [a for a in axes if int(x.shape[a]) > 1]
            if len(wide) < 2:
                continue
            rest = wide[1:]
            inner_shape = [1 if a in rest else int(d) for a, d in enumerate(x.shape)]
            partial = gs.Variable(f"{node.name or x.name}_partial", dtype=x.dtype, shape=inner_shape)
            inner = gs.Node(node.op, name=f"{node.name}_inner", attrs={"keepdims": 1},
                            inputs=[x, gs.Constant(f"{node.name or x.name}_inner_axes", np.array(rest, np.int64))],
                            outputs=[partial])
            outer_axes = axes  # the inner axes are 1 now: reducing them again only drops them (keepdims=0)
            node.inputs.clear()
            node.inputs.extend([partial, gs.Constant(f"{node.name or x.name}_outer_axes", np.array(outer_axes, np.int64))])
            node.attrs.pop("axes", None)
            graph.nodes.append(inner)
            split += 1
        if split:
            graph.cleanup(remove_unused_graph_inputs=False).toposort()
        return split or None
