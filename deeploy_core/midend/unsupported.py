"""The report of every node the platform cannot map, raised once with all of them."""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.errors import DeeployError
from deeploy_core.mapping import Mismatch

_CLOSENESS = {"shape": 1, "attribute": 2, "dtype": 3, "op": 4}


def _distance(mismatch: Mismatch) -> int:
    """How far a failed alternative is from fitting: types that fail after a successful parse are nearest;
    a parser that refuses the node's types outright (another type family) is far."""
    return 0 if mismatch.parsed else _CLOSENESS[mismatch.category]


@dataclass(frozen=True)
class UnsupportedNode:
    """A node with the reason of every alternative that was tried."""

    node: str
    op_type: str
    mismatches: tuple[Mismatch, ...]

    def closest(self) -> Mismatch | None:
        """The alternative that failed last (type mismatch after a successful parse beats a bad attribute)."""
        if not self.mismatches:
            return None
        return min(self.mismatches, key=_distance)

    def describe(self) -> str:
        """``node 'x' (Op): reason; closest supported variant: …``"""
        closest = self.closest()
        if closest is None:
            return f"node {self.node!r} ({self.op_type}): op {self.op_type} is not supported on this platform"
        text = f"node {self.node!r} ({self.op_type}): {closest.category} — {closest.reason}"
        if closest.alternative:
            text += f" (closest supported variant: {closest.alternative})"
        return text


class UnsupportedModelError(DeeployError):
    """Some nodes cannot be mapped; lists every one of them."""

    def __init__(self, platform: str, nodes: list[UnsupportedNode]) -> None:
        self.nodes = nodes
        if len(nodes) == 1:
            super().__init__(f"{nodes[0].describe()} (platform {platform!r})")
            return
        names = ", ".join(f"{node.node!r} ({node.op_type})" for node in nodes)
        super().__init__(f"{len(nodes)} nodes are not supported on platform {platform!r}: {names}",
                         details=tuple(node.describe() for node in nodes))
