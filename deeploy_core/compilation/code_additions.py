"""File-scope code that extensions add to ``Network.c`` besides the layers' own."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class CodeAdditions:
    """Headers and definitions an extension needs once per network, not per layer.

    A tiler, for instance, includes its transfer engine's header and declares
    the compute level's static memory.  They are kept apart from the layers'
    execution blocks because they belong to no layer, and gathered here so the
    network deployer emits them in one place, in the order they were added.
    """

    headers: list[str] = field(default_factory=list)
    """``#include`` names, merged with the kernels' headers (sorted, each once)."""
    definitions: list[str] = field(default_factory=list)
    """C text emitted before the layers' definitions, in this order."""
