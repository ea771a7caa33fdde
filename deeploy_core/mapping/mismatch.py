"""Why a node cannot be mapped: one reason per failed alternative, for the user's report."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from deeploy_core.ir import DataType

MismatchCategory = Literal["op", "dtype", "attribute", "shape"]


@dataclass(frozen=True)
class IntegerWanted:
    """A float tensor that an integer kernel refused, with the integer type the kernel declares.

    Deeploy's integer networks declare their inputs as float; recording which
    tensor an integer kernel refused (rather than only a sentence) lets the
    error trace the refusal back to the graph input whose type the user must
    name.
    """

    tensor: str
    dtype: DataType | None = None
    """The exact integer type the kernel takes; None when any integer type will do."""


@dataclass(frozen=True)
class Mismatch:
    """One alternative (mapper × binding) that does not fit a node, and why."""

    category: MismatchCategory
    reason: str
    alternative: str = ""
    parsed: bool = False
    """True when the node parsed and only the binding's types failed (the nearest miss)."""
    wants_integer: tuple[IntegerWanted, ...] = ()
    """Float tensors this alternative refused because it computes on integers."""

    def __str__(self) -> str:
        return f"{self.category}: {self.reason}"


class NodeMismatch(Exception):
    """Raised by a parser when a node's attributes or shapes are outside what the kernel handles.

    An integer kernel that refuses a float operand names it in ``wants_integer``
    (tensor names or :class:`IntegerWanted`), so a float-declared graph input
    behind it can be reported with the option that fixes it.
    """

    def __init__(self, category: MismatchCategory, reason: str,
                 wants_integer: Iterable[str | IntegerWanted] = ()) -> None:
        super().__init__(reason)
        wanted = tuple(item if isinstance(item, IntegerWanted) else IntegerWanted(item) for item in wants_integer)
        self.mismatch = Mismatch(category, reason, wants_integer=wanted)
