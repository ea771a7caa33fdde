"""A non-mutating, stable topological order of a graph's nodes.

``onnx_graphsurgeon.Graph.toposort`` sorts the graph *in place*, which a
read-only pass (such as a visitor) must not do: it would change the graph
behind the back of the pipeline, which believes nothing was modified.  This
computes the order on a copy instead.  It is stable -- among nodes that are
ready at the same time, the one earlier in ``graph.nodes`` comes first -- so
an already sorted graph is visited exactly in its own order and results are
deterministic.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Sequence

import onnx_graphsurgeon as gs

__all__ = ["topological_order"]


def topological_order(nodes: Sequence[gs.Node]) -> list[gs.Node]:
    """Return ``nodes`` ordered so that producers precede their consumers.

    Dependencies are found through tensor identity: node B depends on node A
    if B (or a subgraph attribute of B, for outer-scope tensors used inside
    control flow) consumes a tensor that A produces.  Tensors produced
    outside ``nodes`` (graph inputs, constants) impose no constraint.

    Raises:
        ValueError: if the nodes contain a cycle.
    """
    producer_of: dict[int, int] = {}
    for index, node in enumerate(nodes):
        for tensor in node.outputs:
            producer_of[id(tensor)] = index

    consumers: list[list[int]] = [[] for _ in nodes]
    pending: list[int] = [0] * len(nodes)
    for index, node in enumerate(nodes):
        producers = {
            producer_of[id(tensor)]
            for tensor in _consumed_tensors(node)
            if id(tensor) in producer_of
        }
        producers.discard(index)
        pending[index] = len(producers)
        for producer in producers:
            consumers[producer].append(index)

    ready = [index for index, count in enumerate(pending) if count == 0]
    heapq.heapify(ready)
    order: list[gs.Node] = []
    while ready:
        index = heapq.heappop(ready)
        order.append(nodes[index])
        for consumer in consumers[index]:
            pending[consumer] -= 1
            if pending[consumer] == 0:
                heapq.heappush(ready, consumer)

    if len(order) != len(nodes):
        stuck = [nodes[i].name for i, count in enumerate(pending) if count > 0]
        raise ValueError(f"graph contains a cycle through nodes {stuck}")
    return order


def _consumed_tensors(node: gs.Node) -> Iterator[gs.Tensor]:
    """The node's inputs plus any tensor consumed inside its subgraphs."""
    yield from node.inputs
    for subgraph in node.subgraphs(recursive=True):
        for inner in subgraph.nodes:
            yield from inner.inputs
