"""Choosing the patterns: a subgraph transformation over the network's patterns, guided by the tiler's cost.

The graph it rewrites is the sequence of patterns (every tiled layer starts
as a pattern of its own).  A candidate is a pair of adjacent patterns where
the first one's last layer feeds the second one's first layer, and nothing
else reads that tensor; ``can_be_applied`` asks the :class:`PatternJudge`
whether the merged pattern is worth it, ``apply`` merges the two.  The
driver of :class:`~deeploy_core.passes.subgraph.SubgraphTransformation`
re-matches after every merge, so chains grow one layer at a time from the
network's start, as long as each step pays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from deeploy_core.passes.subgraph import Subgraph, SubgraphTransformation
from deeploy_core.tiling.fusion.boxes import PatternCost
from deeploy_core.tiling.fusion.pattern import FusedPattern


@dataclass
class PatternGraph:
    """The network's tiled layers grouped into patterns, in execution order, with each pattern's tile and cost."""

    patterns: list[FusedPattern]
    tiles: dict[tuple[str, ...], dict[int, int]] = field(default_factory=dict)
    costs: dict[tuple[str, ...], PatternCost] = field(default_factory=dict)

    def position_of(self, subgraph: Subgraph) -> int | None:
        """The index of the pattern whose last node starts the match (None if the match is stale)."""
        for index, pattern in enumerate(self.patterns[:-1]):
            if pattern.layers[-1].node is subgraph.node(0) and self.patterns[index + 1].layers[0].node is subgraph.node(1):
                return index
        return None


@dataclass(frozen=True)
class Verdict:
    """A merged pattern the judge accepts, with its tile and cost."""

    pattern: FusedPattern
    tile: dict[int, int]
    cost: PatternCost


Judge = Callable[[FusedPattern, FusedPattern, PatternGraph], "Verdict | None"]
"""Given two adjacent patterns (and the graph with their costs), the merged pattern if it is legal and pays."""


class FuseAdjacentPatterns(SubgraphTransformation[PatternGraph]):
    """Merges adjacent patterns while the merged one fits the compute level and costs less."""

    name = "fuse-adjacent-patterns"

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self._verdicts: dict[tuple[str, ...], Verdict | None] = {}

    def find_candidates(self, graph: PatternGraph) -> Iterator[Subgraph]:
        for first, second in zip(graph.patterns, graph.patterns[1:]):
            yield Subgraph((first.layers[-1].node, second.layers[0].node))

    def _verdict(self, graph: PatternGraph, subgraph: Subgraph) -> Verdict | None:
        index = graph.position_of(subgraph)
        if index is None:
            return None
        first, second = graph.patterns[index], graph.patterns[index + 1]
        key = first.names + second.names
        if key not in self._verdicts:  # the driver searches again after each merge: judge every pair once
            self._verdicts[key] = self.judge(first, second, graph)
        return self._verdicts[key]

    def can_be_applied(self, graph: PatternGraph, subgraph: Subgraph) -> bool:
        return self._verdict(graph, subgraph) is not None

    def apply(self, graph: PatternGraph, subgraph: Subgraph) -> None:
        verdict = self._verdict(graph, subgraph)
        index = graph.position_of(subgraph)
        assert verdict is not None and index is not None
        graph.patterns[index:index + 2] = [verdict.pattern]
        graph.tiles[verdict.pattern.names] = verdict.tile
        graph.costs[verdict.pattern.names] = verdict.cost
