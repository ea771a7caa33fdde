"""Alias layers (Reshape, Flatten, Squeeze, Unsqueeze, Identity) share their input's memory."""

from __future__ import annotations

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer


def mark_aliases(layers: list[Layer], ctxt: NetworkContext) -> None:
    """Turn the output of every layer whose representation names ``alias_of`` into a reference buffer.

    A graph output stays an output (the user reads it through its own pointer) but
    still shares the memory of the tensor it views.
    """
    for layer in layers:
        target = layer.representation.get("alias_of")
        if target is None:
            continue
        output = ctxt[layer.output_names[0]]
        if output.kind is not BufferKind.OUTPUT:
            output.kind = BufferKind.ALIAS
        output.alias_of = target
