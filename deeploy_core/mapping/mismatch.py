"""Why a node cannot be mapped: one reason per failed alternative, for the user's report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

MismatchCategory = Literal["op", "dtype", "attribute", "shape"]


@dataclass(frozen=True)
class Mismatch:
    """One alternative (mapper × binding) that does not fit a node, and why."""

    category: MismatchCategory
    reason: str
    alternative: str = ""
    parsed: bool = False
    """True when the node parsed and only the binding's types failed (the nearest miss)."""

    def __str__(self) -> str:
        return f"{self.category}: {self.reason}"


class NodeMismatch(Exception):
    """Raised by a parser when a node's attributes or shapes are outside what the kernel handles."""

    def __init__(self, category: MismatchCategory, reason: str) -> None:
        super().__init__(reason)
        self.mismatch = Mismatch(category, reason)
