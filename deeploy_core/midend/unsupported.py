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
    """A node with the reason of every alternative that was tried.

    The front end reports ops that have no ONNX schema before any mapper is
    tried; it sets ``domain`` (``""`` for the default one) and
    ``supported_on`` (the installed platforms that map the op), so the user
    learns where the node would compile.  The mapper leaves both ``None``.
    """

    node: str
    op_type: str
    mismatches: tuple[Mismatch, ...]
    domain: str | None = None
    supported_on: tuple[str, ...] | None = None

    def op_label(self) -> str:
        """``Conv``; ``IntegerMean in the default domain`` or ``Foo in domain com.example`` when the domain is known."""
        if self.domain is None:
            return self.op_type
        return f"{self.op_type} in {f'domain {self.domain}' if self.domain else 'the default domain'}"

    def where_supported(self) -> str:
        """``; supported on: pulp-cluster``, ``; no installed platform supports it``, or nothing when not asked."""
        if self.supported_on is None:
            return ""
        if not self.supported_on:
            return "; no installed platform or operator plugin supports it"
        return f"; supported on: {', '.join(self.supported_on)}"

    def closest(self) -> Mismatch | None:
        """The alternative that failed last (type mismatch after a successful parse beats a bad attribute)."""
        if not self.mismatches:
            return None
        return min(self.mismatches, key=_distance)

    def describe(self) -> str:
        """``node 'x' (Op): reason; closest supported variant: …``"""
        closest = self.closest()
        if closest is None:
            if self.domain is not None:
                return (f"node {self.node!r} ({self.op_label()}): the op has no ONNX schema and is not supported on "
                        f"this platform{self.where_supported()}")
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
        names = ", ".join(f"{node.node!r} ({node.op_label()})" for node in nodes)
        super().__init__(f"{len(nodes)} nodes are not supported on platform {platform!r}: {names}",
                         details=tuple(node.describe() for node in nodes))
