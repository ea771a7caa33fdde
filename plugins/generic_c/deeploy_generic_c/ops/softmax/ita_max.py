"""Deeploy's ``ITAMax`` and ``ITAPartialMax``: the integer softmax of the ITA attention accelerator.

Both approximate exp(x) by 2^-(m - x)/32 in 8-bit precision: an element ``d =
max - x`` below the row's maximum weighs ``256 >> ((d + 16) >> 5)``, and the
output is the reciprocal of the row's total weight shifted the same way.
``ITAPartialMax`` computes the same thing streaming over column groups of
``group_width``, rescaling the running sum whenever a later group raises the
maximum, and scales to ``n_levels/2 - 1`` (127) instead of ``n_levels - 1``.
The arithmetic is ``deeploy-op-semantics.md`` §4.2 and §4.3 (both verified
there against Deeploy's held-out models).  Neither op has an ONNX schema, so
the platforms declare them here (output: shape of input 0; the integer
typing pass makes it uint8 from ``n_levels``).

With 8-bit inputs every shift stays below 13, so the C shifts are defined
without guards.  The reduction is over the last axis, whatever ``axis``
attribute is present (as in Deeploy); the tiler keeps rows whole, and on the
cluster each core computes a contiguous run of rows.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema,
    NetworkContext,
    NodeBinding,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    OperatorRepresentation,
)
from deeploy_generic_c.parsing.row_parameters import eight_bit_input, required_integer
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE

ITA_MAX_SCHEMA = CustomOpSchema("ITAMax")
ITA_PARTIAL_MAX_SCHEMA = CustomOpSchema("ITAPartialMax")


def _levels(node: gs.Node) -> int:
    """``n_levels``, bounded so that (n_levels - 1)·256 fits uint32 and the output fits the uint16 it may get."""
    levels = required_integer(node, "n_levels")
    if not 2 <= levels <= 65536:
        raise NodeMismatch("attribute", f"attribute 'n_levels' is {levels}; it must lie in 2..65536")
    return levels


def _exponent(peak: str, value: str) -> str:
    """The exponent ``round((peak - value) / 32)`` (half up) as a C expression; ``peak >= value`` always."""
    return f"((uint32_t)({peak} - (int32_t){value} + 16) >> 5)"


class ItaMaxParser(NodeParser):
    """ITAMax (§4.2): per row m = max, S = Σ 256 >> e_j, y_j = ((n_levels-1)·256 / S) >> e_j."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        eight_bit_input(x, "ITAMax")
        levels = _levels(node)
        length = x.shape[-1]
        rows = x.numel // length
        value = f"{x.c_name}[base + j]"
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int32_t peak = (int32_t){x.c_name}[base];
    uint32_t sum = 0;
    for (int32_t j = 1; j < {length}; ++j) peak = (int32_t){value} > peak ? (int32_t){value} : peak;
    for (int32_t j = 0; j < {length}; ++j) sum += 256u >> {_exponent("peak", value)};
    const uint32_t inv = {(levels - 1) * 256}u / sum;
    for (int32_t j = 0; j < {length}; ++j) {y.c_name}[base + j] = ({y.dtype.c_type})(inv >> {_exponent("peak", value)});
}}"""
        return {"code": code, "size": x.numel * 3}


class ItaPartialMaxParser(NodeParser):
    """ITAPartialMax (§4.3): ITAMax streamed over groups of ``group_width`` columns, scaled to n_levels/2 - 1."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        eight_bit_input(x, "ITAPartialMax")
        levels = _levels(node)
        width = required_integer(node, "group_width")
        length = x.shape[-1]
        if width < 1 or length % width:
            raise NodeMismatch("attribute", f"attribute 'group_width' is {width}; it must divide the last axis ({length})")
        rows = x.numel // length
        value = f"{x.c_name}[base + j]"
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int32_t peak = -128;
    uint32_t partial = 0;
    for (int32_t g = 0; g < {length}; g += {width}) {{
        int32_t group_peak = -128;
        uint32_t rescale = 0, group_sum = 0;
        for (int32_t j = g; j < g + {width}; ++j) group_peak = (int32_t){value} > group_peak ? (int32_t){value} : group_peak;
        if (group_peak > peak) {{
            rescale = {_exponent("group_peak", "peak")};
            peak = group_peak;
        }}
        for (int32_t j = g; j < g + {width}; ++j) group_sum += 256u >> {_exponent("peak", value)};
        partial = (partial >> rescale) + group_sum;
    }}
    const uint32_t inv = {(levels // 2 - 1) * 256}u / partial;
    for (int32_t j = 0; j < {length}; ++j) {y.c_name}[base + j] = ({y.dtype.c_type})(inv >> {_exponent("peak", value)});
}}"""
        return {"code": code, "size": x.numel * 3}


SCHEMAS: tuple[CustomOpSchema, ...] = (ITA_MAX_SCHEMA, ITA_PARTIAL_MAX_SCHEMA)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "ITAMax": (NodeMapper(ItaMaxParser(), (NodeBinding(ANY, INLINE),), name="ITAMax integer"),),
    "ITAPartialMax": (NodeMapper(ItaPartialMaxParser(), (NodeBinding(ANY, INLINE),), name="ITAPartialMax integer"),),
}
