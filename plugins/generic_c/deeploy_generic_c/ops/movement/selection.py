"""Compress (constant condition) and ReverseSequence (constant or run-time lengths) for every element type.

Compress's output size depends on its condition's values, so the condition
must be a constant: the kept positions are then known and written into the
layer.  ReverseSequence's lengths may be computed at run time; a length
outside ``[0, time steps]`` is clamped to that range (ONNX calls it an error;
clamping keeps every read inside the tensor).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation,
)
from deeploy_generic_c.parsing.common import int_array, single_binding
from deeploy_generic_c.parsing.indexing import require_index_type, require_same_type
from deeploy_generic_c.kernels.strided import (
    block,
    counters,
    dense_strides,
    nested_loops,
    normalise_axis,
    offset,
    typed_views,
)


class CompressParser(NodeParser):
    """The slices along ``axis`` (or the elements of the flattened input) whose condition is true."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        condition = np.asarray(NodeParser.constant_values(ctxt, node.inputs[1], "condition")).reshape(-1).astype(bool)
        if NodeParser.attribute(node, "axis", None) is None:
            outer, length, inner = 1, x.numel, 1
        else:
            axis = normalise_axis(int(NodeParser.attribute(node, "axis")), len(x.shape))
            outer, length, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1:])
        if condition.size > length:
            raise NodeMismatch("shape", f"condition has {condition.size} elements, the axis only {length}")
        kept = np.nonzero(condition)[0].tolist()
        if outer * len(kept) * inner != y.numel:
            raise NodeMismatch("shape", f"output shape {list(y.shape)} does not hold the {len(kept)} kept slices")
        if not kept or y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        lines = typed_views(x.dtype, {"src": x.c_name}, {"dst": y.c_name}) + [
            f"const int32_t *kept = {int_array(kept)};",
            f"for (int32_t o = 0; o < {outer}; ++o) {{",
            f"    for (int32_t s = 0; s < {len(kept)}; ++s) {{",
            f"        for (int32_t i = 0; i < {inner}; ++i) dst[(o * {len(kept)} + s) * {inner} + i] = "
            f"src[(o * {length} + kept[s]) * {inner} + i];",
            "    }",
            "}",
        ]
        return {"call": block(lines), "size": 0}


class ReverseSequenceParser(NodeParser):
    """Along ``time_axis``, the first ``sequence_lens[b]`` steps of batch entry ``b`` reversed, the rest copied."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, lens, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        require_same_type(x, y)
        require_index_type(lens)
        rank = len(x.shape)
        if rank < 2:
            raise NodeMismatch("shape", f"ReverseSequence needs rank >= 2, the input has rank {rank}")
        batch_axis = normalise_axis(int(NodeParser.attribute(node, "batch_axis", 1)), rank, "batch_axis")
        time_axis = normalise_axis(int(NodeParser.attribute(node, "time_axis", 0)), rank, "time_axis")
        if batch_axis == time_axis or lens.numel != x.shape[batch_axis]:
            raise NodeMismatch("shape", f"sequence_lens {list(lens.shape)} does not fit batch axis {batch_axis} "
                                        f"of {list(x.shape)} (time axis {time_axis})")
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        steps = x.shape[time_axis]
        names = counters(rank)
        source = list(dense_strides(x.shape))
        time_stride, source[time_axis] = source[time_axis], 0
        b, t = names[batch_axis], names[time_axis]
        body = [f"int64_t n = (int64_t)lens[{b}]; n = n < 0 ? 0 : (n > {steps} ? {steps} : n);",
                f"const int32_t from = {t} < n ? (int32_t)n - 1 - {t} : {t};",
                f"dst[{offset(names, dense_strides(x.shape))}] = src[{offset(names, source)} + from * {time_stride}];"]
        c_lens = lens.dtype.c_type
        lines = typed_views(x.dtype, {"src": x.c_name}, {"dst": y.c_name})
        lines.append(f"const {c_lens} *lens = (const {c_lens} *){lens.c_name};")
        return {"call": block(lines + nested_loops(x.shape, body)), "size": 0}


_CHECKER = NodeTypeChecker((None, None), (None,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Compress": single_binding(CompressParser(), _CHECKER, "Compress any type"),
    "ReverseSequence": single_binding(ReverseSequenceParser(), _CHECKER, "ReverseSequence any type"),
}
NODE_TESTED = ("Compress", "ReverseSequence")
