"""Deeploy's ``iNoNorm``: the affine "no-norm" of integer MobileBERT-style blocks, wrapping to int8.

``deeploy-op-semantics.md`` §8 (unverified: Deeploy runs it on its Snitch target only and ships no test data),
inputs ``x`` (int8), ``weights`` and ``bias`` (element-wise with x; numpy broadcasting is accepted here),
attributes ``D`` (a power of two), ``mul`` and ``n_levels`` (read by Deeploy's parser, unused by its kernel)::

    y = wrap8(((x*w + b) * mul) >> log2(D))      # arithmetic shift; wrap8(v) = ((v + 128) mod 256) - 128

Deeploy computes in 32 bits and truncates to 8 without saturating; this kernel computes in 64 bits (equal
wherever the 32-bit value does not overflow, which C leaves undefined anyway) and wraps explicitly, so the
result does not rest on the compiler's implementation-defined narrowing.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema, Elementwise, NetworkContext, NodeBinding, NodeMapper, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.dialect import element_loops, integer_attribute, require_integer, shift_of
from deeploy_generic_c.parsing.integer_bindings import INLINE


class INoNormParser(NodeParser):
    """y = wrap8(((x*w + b)*mul) >> log2 D) element-wise (w, b broadcast to x), int8 out without saturation."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, w, b, y = (ctxt[tensor.name] for tensor in (*node.inputs, node.outputs[0]))
        for buffer, what in ((x, "input x"), (w, "weights"), (b, "bias")):
            require_integer(buffer, what)
        shift = shift_of(integer_attribute(node, "D"), "attribute 'D' of iNoNorm")
        mul = integer_attribute(node, "mul")
        body = (f"{{ const int64_t v = (((int64_t){x.c_name}[o0] * {w.c_name}[o1] + {b.c_name}[o2]) * {mul}LL) >> {shift}; "
                f"int64_t m = (v + 128) % 256; m = m < 0 ? m + 256 : m; {y.c_name}[y] = ({y.dtype.c_type})(m - 128); }}")
        return {"code": element_loops(y, [x, w, b], body), "size": y.numel}


SCHEMAS: tuple[CustomOpSchema, ...] = (CustomOpSchema("iNoNorm"),)
"""Output shaped like x (weights and bias broadcast to it), typed int8 by the integer typing."""

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "iNoNorm": (NodeMapper(INoNormParser(), (NodeBinding(NodeTypeChecker((None, None, None), (dtypes.INT8,)), INLINE),),
                           name="iNoNorm integer (wraps to int8)", tile_constraint=Elementwise()),),
}
