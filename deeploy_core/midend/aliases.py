"""Alias layers (Reshape, Flatten, Squeeze, Unsqueeze, Identity, contiguous Split) share their input's memory."""

from __future__ import annotations

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.mapping import Layer


def mark_aliases(layers: list[Layer], ctxt: NetworkContext) -> None:
    """Turn the output of every layer whose representation names ``alias_of`` into a reference buffer.

    A graph output stays an output (the user reads it through its own pointer) but
    still shares the memory of the tensor it views.  A layer with several
    outputs (a Split into contiguous slabs) names each output's byte offset
    into the target in ``alias_offsets``; every output becomes a view.
    """
    for layer in layers:
        target = layer.representation.get("alias_of")
        if target is None:
            continue
        offsets: dict[str, int] = layer.representation.get("alias_offsets", {})
        for name in layer.output_names if offsets else layer.output_names[:1]:
            output = ctxt[name]
            if output.kind is not BufferKind.OUTPUT:
                output.kind = BufferKind.ALIAS
            output.alias_of = target
            output.alias_offset = int(offsets.get(name, 0))
