"""Per-operator dispatch over the nodes of a graph.

Many passes (shape checks, cost models, code-size estimates) are naturally
written as "do X for every Conv, Y for every Gemm".  A visitor lets them say
exactly that by defining ``visit_Conv``/``visit_Gemm`` methods, instead of
repeating the same loop and ``if node.op == ...`` chain in every pass.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import onnx_graphsurgeon as gs

from deeploy_core.passes.base import Pass
from deeploy_core.passes.modifies import Modifies
from deeploy_core.passes.toposort import topological_order

__all__ = ["VisitorPass"]

_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


class VisitorPass(Pass[gs.Graph]):
    """Calls ``visit_<OpType>(graph, node)`` for every node, in dependency order.

    Characters of the op type that cannot appear in a Python identifier are
    replaced by ``_`` (``"My.Op-2"`` dispatches to ``visit_My_Op_2``).  Nodes
    without a matching method go to :meth:`generic_visit`.

    Nodes are visited in a topological order computed on a copy of the node
    list, so visiting never reorders the graph.  The default
    :meth:`modifies` is ``Modifies.Nothing``; a visitor that edits nodes must
    override it.
    """

    def modifies(self) -> Modifies:
        return Modifies.Nothing

    def apply_pass(
        self, graph: gs.Graph, pipeline_results: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Visit every node; return ``{node.name: value}`` of non-``None`` values.

        Returns ``None`` when no visit returned a value.

        Raises:
            ValueError: if two nodes with the same name both return a value
                (one of them would otherwise be lost silently), or if the
                graph contains a cycle.
        """
        collected: dict[str, Any] = {}
        for node in topological_order(list(graph.nodes)):
            value = self.visitor_for(node)(graph, node)
            if value is None:
                continue
            if node.name in collected:
                raise ValueError(
                    f"{self.name}: several visited nodes are named {node.name!r}; "
                    "give the nodes unique names"
                )
            collected[node.name] = value
        return collected or None

    def visitor_for(self, node: gs.Node) -> Callable[[gs.Graph, gs.Node], Any]:
        """The bound method that handles ``node``."""
        method = getattr(self, "visit_" + _NOT_IDENTIFIER.sub("_", node.op), None)
        if callable(method):
            return method
        return self.generic_visit

    def generic_visit(self, graph: gs.Graph, node: gs.Node) -> Any | None:
        """Handle a node with no specific ``visit_`` method; does nothing."""
        return None
