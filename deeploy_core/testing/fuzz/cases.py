"""A fuzz case: one drawn graph (of a drawn flavour) and the target it is compiled for on each platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from hypothesis import strategies as st

from deeploy_core.testing.fuzz.graphs import FuzzGraph, float_graphs
from deeploy_core.testing.fuzz.qdq import fixed_point_graphs, qdq_graphs
from deeploy_core.testing.fuzz.targets import TARGETS, Target

GRAPHS: dict[str, Callable[..., st.SearchStrategy[FuzzGraph]]] = {
    "float": float_graphs, "qdq": qdq_graphs, "qdq-fixed": fixed_point_graphs}
"""Graph strategy per flavour."""
FLAVOURS = tuple(GRAPHS)


@dataclass(frozen=True)
class FuzzCase:
    graph: FuzzGraph
    targets: tuple[Target, ...]


@st.composite
def fuzz_cases(draw: st.DrawFn, flavours: tuple[str, ...] = FLAVOURS, platforms: tuple[str, ...] = tuple(TARGETS),
               max_layers: int = 6) -> FuzzCase:
    """A graph of one of ``flavours`` and one target per platform in ``platforms``."""
    flavour = draw(st.sampled_from(flavours))
    graph = draw(GRAPHS[flavour](max_layers=max_layers))
    return FuzzCase(graph, tuple(draw(TARGETS[platform]()) for platform in platforms))
