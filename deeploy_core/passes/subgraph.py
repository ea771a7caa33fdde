"""Pattern-based graph rewriting: find a subgraph, check it, replace it.

Most optimisations of a compiler for small devices are local rewrites
(fuse Conv + RequantShift, drop a redundant Transpose pair, ...).  Splitting
each into *find candidates* / *check applicability* / *apply* keeps the
matching logic, the legality conditions and the rewrite separately testable,
and lets one driver loop handle the delicate part -- re-matching on the
changed graph until nothing applies anymore.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

import onnx_graphsurgeon as gs

from deeploy_core.passes.base import GraphT, Pass
from deeploy_core.passes.modifies import Modifies

__all__ = ["OpChainPattern", "Subgraph", "SubgraphTransformation"]


@dataclass(frozen=True, eq=False)
class Subgraph:
    """A match: the matched nodes, in the order of the pattern.

    Equality and hashing are by node *identity*: ``gs.Node`` compares by
    value and is unhashable, but two matches are the same only if they bind
    the very same node objects.
    """

    nodes: tuple[gs.Node, ...]

    def node(self, index: int) -> gs.Node:
        """The node bound to position ``index`` of the pattern."""
        return self.nodes[index]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Subgraph):
            return NotImplemented
        return len(self.nodes) == len(other.nodes) and all(
            a is b for a, b in zip(self.nodes, other.nodes, strict=True)
        )

    def __hash__(self) -> int:
        return hash(tuple(id(node) for node in self.nodes))


class SubgraphTransformation(Pass[GraphT]):
    """Applies a local rewrite repeatedly until no candidate applies.

    After every application the graph is cleaned up and re-sorted (when it
    supports ``cleanup``/``toposort``) and candidates are searched again from
    scratch: a rewrite may remove matched nodes or create new matches, so
    candidates found before it cannot be trusted.
    """

    #: Upper bound on applications in one run.  A rewrite that recreates its
    #: own pattern would otherwise loop forever; exceeding the bound is
    #: reported as an error rather than silently truncated.
    max_applications: ClassVar[int] = 10_000

    def modifies(self) -> Modifies:
        return Modifies.Everything

    @abc.abstractmethod
    def find_candidates(self, graph: GraphT) -> Iterable[Subgraph]:
        """Every potential match, in a deterministic order."""

    @abc.abstractmethod
    def can_be_applied(self, graph: GraphT, subgraph: Subgraph) -> bool:
        """Whether the rewrite is legal for this match."""

    @abc.abstractmethod
    def apply(self, graph: GraphT, subgraph: Subgraph) -> None:
        """Rewrite the match in place.

        Nodes that become unused need not be removed: the driver runs
        ``graph.cleanup()`` afterwards.
        """

    def apply_pass(self, graph: GraphT, pipeline_results: dict[str, Any]) -> int | None:
        """Apply the first applicable candidate until none is left.

        Returns the number of applications, or ``None`` if there were none.

        Raises:
            RuntimeError: if more than :attr:`max_applications` would be
                needed.
        """
        applications = 0
        while (match := self._first_applicable(graph)) is not None:
            if applications >= self.max_applications:
                raise RuntimeError(
                    f"{self.name} still applies after {self.max_applications} "
                    "applications; its rewrite probably recreates its own pattern"
                )
            self.apply(graph, match)
            applications += 1
            _tidy(graph)
        return applications or None

    def _first_applicable(self, graph: GraphT) -> Subgraph | None:
        for candidate in self.find_candidates(graph):
            if self.can_be_applied(graph, candidate):
                return candidate
        return None


def _tidy(graph: Any) -> None:
    """Remove dangling nodes/tensors and restore topological order, if supported."""
    cleanup = getattr(graph, "cleanup", None)
    if callable(cleanup):
        cleanup()
    toposort = getattr(graph, "toposort", None)
    if callable(toposort):
        toposort()


class OpChainPattern(SubgraphTransformation[gs.Graph]):
    """Matches straight chains of operators, such as ``Conv -> RequantShift``.

    A chain is nodes ``n0 -> n1 -> ...`` with ``n[i].op == pattern[i]``
    where the first output of each node except the last is consumed by the
    next node *only*: exactly one consuming node, and not a graph output.
    That is the condition under which the chain can be fused without
    duplicating work or losing a value someone else reads.  Candidates are
    yielded in the order of their first node in ``graph.nodes``.

    Subclasses set :attr:`pattern` (on the class, or per instance when one
    class serves several chains) and implement :meth:`apply`;
    :meth:`can_be_applied` accepts every chain unless overridden.
    """

    #: Op types of the chain, first to last.
    pattern: tuple[str, ...] = ()

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        if not self.pattern:
            raise TypeError(f"{type(self).__qualname__} does not define a pattern")
        nodes = list(graph.nodes)
        in_graph = {id(node) for node in nodes}
        for node in nodes:
            if node.op != self.pattern[0]:
                continue
            chain = self._follow_chain(graph, in_graph, node)
            if chain is not None:
                yield Subgraph(chain)

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        return True

    def _follow_chain(
        self, graph: gs.Graph, in_graph: set[int], first: gs.Node
    ) -> tuple[gs.Node, ...] | None:
        chain = [first]
        for op in self.pattern[1:]:
            successor = _sole_consumer(graph, in_graph, chain[-1])
            if successor is None or successor.op != op:
                return None
            chain.append(successor)
        return tuple(chain)


def _sole_consumer(graph: gs.Graph, in_graph: set[int], node: gs.Node) -> gs.Node | None:
    """The only node reading ``node``'s first output, if there is exactly one.

    ``None`` if the output is missing, is a graph output, or is read by zero
    or several nodes.  A node reading the tensor through several of its
    inputs counts once.  Only nodes in the graph (ids in ``in_graph``) count:
    a node removed from ``graph.nodes`` but not yet disconnected by
    ``cleanup`` still appears among the tensor's consumers.
    """
    if not node.outputs:
        return None
    tensor = node.outputs[0]
    # Identity, not ``in``: gs tensors compare equal by name.
    if any(tensor is output for output in graph.outputs):
        return None
    consumers: list[gs.Node] = []
    for consumer in tensor.outputs:
        if id(consumer) in in_graph and not any(consumer is seen for seen in consumers):
            consumers.append(consumer)
    return consumers[0] if len(consumers) == 1 else None
