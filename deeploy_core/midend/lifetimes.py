"""Buffer lifetimes in layer steps, the input to static allocation.

A buffer is alive over the half-open step interval ``[first, last + 1)``.
Graph inputs live for the whole run and outputs from their producer to the
end, so ``RunNetwork`` can be called again without rewriting its inputs and
outputs stay readable after it returns.  An alias extends the life of the
buffer that holds its memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.ir import Buffer, BufferKind, NetworkContext
from deeploy_core.mapping import Layer


@dataclass(frozen=True)
class Lifetime:
    """``[first, end)`` in layer steps."""

    first: int
    end: int


def compute_lifetimes(layers: list[Layer], ctxt: NetworkContext) -> dict[str, Lifetime]:
    """The lifetime of every buffer that needs arena storage, keyed by buffer name."""
    steps = len(layers)
    first: dict[str, int] = {}
    last: dict[str, int] = {}

    def touch(buffer: Buffer, step: int) -> None:
        storage = ctxt.storage_of(buffer.name)
        if not storage.in_arena:
            return
        first[storage.name] = min(first.get(storage.name, step), step)
        last[storage.name] = max(last.get(storage.name, step), step)

    for layer in layers:
        for name in [*layer.input_names, *layer.output_names, *layer.transients]:
            touch(ctxt[name], layer.index)
    for buffer in ctxt:
        storage = ctxt.storage_of(buffer.name) if buffer.kind is not BufferKind.CONSTANT else buffer
        if buffer.kind is BufferKind.INPUT and storage.in_arena:
            first[storage.name], last[storage.name] = 0, max(steps - 1, last.get(storage.name, 0))
        if buffer.kind is BufferKind.OUTPUT and storage.in_arena:
            first.setdefault(storage.name, 0)
            last[storage.name] = max(steps - 1, 0)
    return {name: Lifetime(first[name], last[name] + 1) for name in sorted(first, key=lambda n: (first[n], n))}
