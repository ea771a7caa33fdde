"""Hoisting scratch buffers out of kernels into the arena."""

from __future__ import annotations

from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.ir.dtypes import UINT8
from deeploy_core.mapping import Layer


def hoist_transient_buffers(layers: list[Layer], ctxt: NetworkContext) -> None:
    """Give every scratch buffer a template asks for a context entry; its C name goes into the representation."""
    for layer in layers:
        for key, size in sorted(layer.binding.template.transient_buffers(layer.representation).items()):
            buffer = ctxt.add(f"{layer.name}/{key}#{layer.index}", UINT8, (size,), BufferKind.TRANSIENT)
            buffer.producer = layer.name
            buffer.consumers.append(layer.name)
            layer.transients.append(buffer.name)
            layer.representation[key] = buffer.c_name
