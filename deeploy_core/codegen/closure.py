"""Closures: each layer becomes a small static function that ``RunNetwork`` calls.

One function per layer keeps ``RunNetwork`` readable, gives profilers and
debuggers a symbol per layer, and gives later passes (e.g. a cluster's fork)
a unit to dispatch.
"""

from __future__ import annotations

from deeploy_core.codegen.execution_block import ExecutionBlock
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.names import c_comment_text


class Closure:
    """Moves the block's body into ``static void <layer>(void)`` and calls it."""

    name = "closure"

    def apply(self, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
        layer = block.layer
        header = f"/* layer {layer.index}: {c_comment_text(layer.op_type, 40)} '{c_comment_text(layer.name, 60)}' */"
        body = "\n".join(f"    {line}" if line else "" for text in block.body for line in text.splitlines())
        block.definitions.append(f"{header}\nstatic void {layer.c_name}(void) {{\n{body}\n}}")
        block.body = [f"{layer.c_name}();"]
        return block
