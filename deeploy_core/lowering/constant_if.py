"""Replacing an ``If`` whose condition is known at compile time by the branch it takes.

A microcontroller network has one static schedule, so an ``If`` can compile
only when its condition is a constant (an initializer, a ``Constant`` node, or
folded to one before lowering).  The chosen branch's nodes move into the
graph: they read outer-scope tensors directly (the same objects), the tensors
they produce are renamed under the ``If`` node's name (two ``If`` nodes may
have branches using the same inner names), and each ``If`` output is the
branch output through an ``Identity`` (removed by the next lowering pass
unless it is a graph output).  An ``If`` whose condition is computed at run
time stays; mapping then refuses it by name like any unsupported node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.errors import DeeployError
from deeploy_core.passes import Modifies, Pass


def constant_condition(tensor: gs.Tensor) -> bool | None:
    """The condition's value when it is known here (an initializer or a ``Constant`` node's output), else None."""
    if isinstance(tensor, gs.Constant):
        values = np.asarray(tensor.values)
    elif len(tensor.inputs) == 1 and tensor.inputs[0].op == "Constant" and "value" in tensor.inputs[0].attrs:
        values = np.asarray(tensor.inputs[0].attrs["value"].values)
    else:
        return None
    return bool(values.reshape(-1)[0]) if values.size == 1 else None


def _label(node: gs.Node, index: int) -> str:
    return f"node {node.name!r}" if node.name else f"node #{index}"


def _rename_value(inner: gs.Variable, outer: gs.Tensor) -> None:
    """Make every producer and consumer of ``inner`` use ``outer`` instead."""
    for consumer in list(inner.outputs):
        for index, tensor in enumerate(list(consumer.inputs)):
            if tensor is inner:
                consumer.inputs[index] = outer
    for producer in list(inner.inputs):
        for index, tensor in enumerate(list(producer.outputs)):
            if tensor is inner:
                producer.outputs[index] = outer


def inline_branch(graph: gs.Graph, node: gs.Node, index: int, taken: bool) -> int:
    """Put the taken branch of ``node`` in its place; returns the number of nodes it brought."""
    branch = node.attrs.get("then_branch" if taken else "else_branch")
    if not isinstance(branch, gs.Graph):
        raise DeeployError(f"{_label(node, index)}: If has no {'then' if taken else 'else'}_branch graph")
    if len(branch.outputs) != len(node.outputs):
        raise DeeployError(f"{_label(node, index)}: If's branch has {len(branch.outputs)} outputs for "
                           f"{len(node.outputs)} node outputs")
    prefix = node.name or f"If_{index}"
    for inner in branch.nodes:
        inner.name = f"{prefix}/{inner.name or inner.op}"
        for tensor in inner.outputs:
            tensor.name = f"{prefix}/{tensor.name}"
    moved, branch_outputs = list(branch.nodes), list(branch.outputs)
    branch.nodes, branch.outputs = [], []  # cleanup would otherwise clean the branch too and unhook the moved nodes
    graph.nodes = [item for item in graph.nodes if item is not node]
    bridges = []
    node_outputs = list(node.outputs)
    for edges in (node.inputs, node.outputs):
        while edges:
            del edges[-1]  # graphsurgeon's synchronised delete: the tensors forget the If too (clear() would not)
    renamed: dict[int, gs.Tensor] = {}
    for position, (inner_output, outer_output) in enumerate(zip(branch_outputs, node_outputs)):
        producer = inner_output.inputs[0] if len(inner_output.inputs) == 1 else None
        if id(inner_output) not in renamed and producer is not None and any(producer is item for item in moved):
            _rename_value(inner_output, outer_output)  # the branch's node writes the If's output itself
            renamed[id(inner_output)] = outer_output
            continue
        source = renamed.get(id(inner_output), inner_output)  # an output returned twice: the second is a copy
        bridges.append(gs.Node("Identity", name=f"{prefix}/output{position}", inputs=[source],
                               outputs=[outer_output]))
    graph.nodes.extend(moved + bridges)
    return len(moved)


class FoldConstantIf(Pass[gs.Graph]):
    """Inline the taken branch of every ``If`` with a compile-time condition; returns one line per If."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> tuple[str, ...] | None:
        folded: list[str] = []
        for _ in range(8):  # a taken branch may hold an If of its own
            found = False
            for index, node in enumerate(list(graph.nodes)):
                if node.op != "If" or (node.domain or "") not in ("", "ai.onnx") or not node.inputs:
                    continue
                taken = constant_condition(node.inputs[0])
                if taken is None:
                    continue
                count = inline_branch(graph, node, index, taken)
                folded.append(f"{_label(node, index)} (If): condition is {taken}, "
                              f"{'then' if taken else 'else'} branch inlined ({count} nodes)")
                found = True
            if not found:
                break
            graph.cleanup(remove_unused_graph_inputs=False).toposort()
        return tuple(folded) or None
