"""Execution blocks: a layer's code on its way through the code-transformation chain."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer


@dataclass
class ExecutionBlock:
    """The code of one layer, with room for passes to add around it.

    ``body`` is what runs inside ``RunNetwork`` for this layer; ``definitions``
    are file-scope C definitions (closures, argument structs) emitted before
    ``RunNetwork``; ``annotations`` carry facts between passes (e.g. which
    buffers become live here).
    """

    layer: Layer
    body: list[str]
    definitions: list[str] = field(default_factory=list)
    annotations: dict[str, Any] = field(default_factory=dict)

    def wrap(self, before: str, after: str) -> None:
        """Put ``before``/``after`` lines around the body."""
        self.body = [before, *self.body, after]


class CodeTransformation(Protocol):
    """A pass over one execution block (the code-transformation hook's product)."""

    name: str

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        """Return the transformed block (it may be the same object, changed)."""
        ...
