"""Memory passthrough: liveness bookkeeping without allocation code.

With a static arena, nothing is allocated or freed at run time, but each
layer still has allocation and free points: the buffers whose lifetime starts
at the layer, and those whose last use it is.  This pass records them on the
execution block (for later passes and for the reader of the generated code)
and emits nothing but a comment.  References (aliases) are resolved to the
buffer that holds their memory; a cycle of references is an error.
"""

from __future__ import annotations

from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.errors import DeeployError
from deeploy_core.ir import Buffer, BufferKind, NetworkContext
from deeploy_core.ir.names import c_comment_text


def is_transient(buffer: Buffer) -> bool:
    return buffer.kind is BufferKind.TRANSIENT


def is_output(buffer: Buffer) -> bool:
    return buffer.kind is BufferKind.OUTPUT


def is_final_input(buffer: Buffer, layer_name: str) -> bool:
    """Whether ``layer_name`` is the last consumer of a non-I/O buffer."""
    return buffer.kind is BufferKind.ACTIVATION and bool(buffer.consumers) and buffer.consumers[-1] == layer_name


def is_memory_level(buffer: Buffer, level: str | None) -> bool:
    """Whether the buffer was annotated with memory level ``level`` (None: any level)."""
    return level is None or buffer.memory_level == level


def topologically_sort_buffers(names: list[str], ctxt: NetworkContext) -> list[str]:
    """Order buffers so every reference comes after the buffer it refers to; detect cycles."""
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == "done":
            return
        if state.get(name) == "active":
            raise DeeployError(f"reference cycle between buffers {' -> '.join(path + [name])}")
        state[name] = "active"
        target = ctxt[name].alias_of
        if target is not None:
            visit(target, path + [name])
        state[name] = "done"
        if name in names:
            order.append(name)

    for name in sorted(names):
        visit(name, [])
    return order


def extract_dynamic_references(names: list[str], ctxt: NetworkContext) -> dict[str, str]:
    """For every reference buffer among ``names``: the buffer that holds its memory."""
    return {name: ctxt.storage_of(name).name for name in names if ctxt[name].kind is BufferKind.ALIAS}


class MemoryPassthrough:
    """Annotates each block with ``allocated``/``freed`` buffer names; emits only a comment."""

    name = "memory-passthrough"

    def __init__(self, memory_level: str | None = None) -> None:
        self.memory_level = memory_level

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        layer = block.layer
        touched = topologically_sort_buffers(sorted({*layer.input_names, *layer.output_names, *layer.transients}), ctxt)
        references = extract_dynamic_references(touched, ctxt)
        allocated, freed = [], []
        for name in touched:
            buffer = ctxt[ctxt.storage_of(name).name] if name in references else ctxt[name]
            if not buffer.in_arena or not is_memory_level(buffer, self.memory_level):
                continue
            if buffer.producer == layer.name and not is_transient(buffer):
                allocated.append(buffer.name)
            if is_transient(buffer):
                allocated.append(buffer.name)
                freed.append(buffer.name)
            elif is_final_input(buffer, layer.name) and not is_output(buffer):
                freed.append(buffer.name)
        block.annotations["allocated"] = sorted(set(allocated))
        block.annotations["freed"] = sorted(set(freed))
        block.annotations["references"] = references
        if allocated or freed:
            live = ", ".join(ctxt[name].c_name for name in block.annotations["allocated"]) or "-"
            dead = ", ".join(ctxt[name].c_name for name in block.annotations["freed"]) or "-"
            block.body.insert(0, f"/* live from here: {c_comment_text(live, 200)}; dead after: {c_comment_text(dead, 200)} */")
        return block
