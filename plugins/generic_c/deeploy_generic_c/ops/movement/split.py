"""Split (opset 13+ ``split`` input, opset 18 ``num_outputs``): each output is a slab of the input along one axis.

When every axis before the split axis has size 1 (the split is along the
outermost non-unit axis), each slab is one contiguous run of the input's
memory: the outputs become views into the input at their byte offsets (no
kernel, no copy; see :func:`deeploy_core.midend.aliases.mark_aliases`).
Otherwise every output copies its slab with the Slice kernel over the input
seen as ``[outer, axis length, inner]`` (three loop levels whatever the rank).
The slab sizes are read off the outputs' inferred shapes, which shape
inference derived from ``split`` or ``num_outputs``, so both forms (equal,
explicit and uneven last parts) take one path.  Zero-sized outputs emit no code.
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import int_array, single_binding


class SplitParser(NodeParser):
    """Any axis, any number of outputs (views when the split is along the outermost non-unit axis, else copies)."""

    inputs = (1, 2)
    outputs = (1, None)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x = ctxt[node.inputs[0].name]
        targets = [ctxt[t.name] for t in node.outputs]
        rank = len(x.shape)
        if rank == 0:
            raise NodeMismatch("shape", "Split needs an input of rank >= 1")
        axis = int(NodeParser.attribute(node, "axis", 0)) % rank
        for target in targets:
            if target.dtype != x.dtype:
                raise NodeMismatch("dtype", f"output type {target.dtype} differs from input type {x.dtype}")
            if len(target.shape) != rank or any(t != s for a, (t, s) in enumerate(zip(target.shape, x.shape)) if a != axis):
                raise NodeMismatch("shape", f"output shape {target.shape} is not a slab of input {x.shape} along axis {axis}")
        if sum(target.shape[axis] for target in targets) != x.shape[axis]:
            raise NodeMismatch("shape", f"the outputs' sizes along axis {axis} do not add up to the input's {x.shape[axis]}")
        outer, length, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1 :])
        if outer == 1:
            offsets, begin = {}, 0
            for target in targets:
                offsets[target.name] = begin * inner * x.dtype.size
                begin += target.shape[axis]
            return {"alias_of": x.name, "alias_offsets": offsets, "size": 0,
                    "call": "/* Split: every output is a view into its input */"}
        calls, begin = [], 0
        for target in targets:
            part = target.shape[axis]
            if target.numel > 0:
                calls.append(
                    f"dcg_slice({x.c_name}, {target.c_name}, {x.dtype.size}, 3, {int_array((outer, length, inner))}, "
                    f"{int_array((outer, part, inner))}, {int_array((0, begin, 0))}, {int_array((1, 1, 1))});"
                )
            begin += part
        return {"call": "\n".join(calls) or "/* Split: every output is empty */", "size": 0}

    def count_ops(self, representation: OperatorRepresentation) -> int:
        return 0


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Split": single_binding(SplitParser(), NodeTypeChecker((None, None), (None,), variadic=True, moves_storage_types=True), "Split any type"),
}
