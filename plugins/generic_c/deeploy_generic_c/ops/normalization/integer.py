"""Deeploy's ``iLayerNorm`` and ``iRMSNorm``: integer normalisations over the last axis (I-BERT style).

Both divide each element by the integer square root of a row statistic and
scale by a per-column int32 weight, all in 64 bits (``(x - mean)·weight``
exceeds int32 for real weights):

* ``iLayerNorm`` (``deeploy-op-semantics.md`` §4.4, verified there against
  Deeploy's held-out models): mean = c_div(Σx, L), var = c_div(Σ(x - mean)², L) + 1,
  y = wrap8((c_div((x - mean)·w, isqrt(var)) + b) >> log2 D).  The final cast
  *wraps* to int8 as Deeploy's kernel does; it does not saturate.
* ``iRMSNorm`` (§8, **unverified**: no Deeploy test exercises it, so this is the
  written arithmetic): ms = c_div(Σx², L) + 1, y = clamp(c_div(x·w, isqrt(ms)) >> log2 D, -128, 127).

c_div is C's truncating division; ``>>`` is an arithmetic shift (floor).  The
square root is exact (see :func:`exact_isqrt`).  Neither op has an ONNX schema,
so the platforms declare them here (output: shape of input 0; the integer
typing pass makes it int8).  ``n_levels`` is accepted and ignored, as in
Deeploy's kernels.  The tiler keeps rows whole and the weight and bias whole;
on the cluster each core computes a contiguous run of rows.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    CustomOpSchema,
    NetworkContext,
    NodeBinding,
    NodeMapper,
    NodeParser,
    OperatorRepresentation,
)
from deeploy_generic_c.parsing.row_parameters import eight_bit_input, exact_isqrt, integer_parameter, power_of_two_shift
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE

I_LAYER_NORM_SCHEMA = CustomOpSchema("iLayerNorm")
I_RMS_NORM_SCHEMA = CustomOpSchema("iRMSNorm")


class ILayerNormParser(NodeParser):
    """iLayerNorm (§4.4): inputs x, weight [L], bias [L]; attribute D (power of two); wraps to int8."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, weight, bias = (ctxt[tensor.name] for tensor in node.inputs[:3])
        y = ctxt[node.outputs[0].name]
        eight_bit_input(x, "iLayerNorm")
        shift = power_of_two_shift(node, "D")
        length = x.shape[-1]
        integer_parameter(weight, "weight (input 1)", length)
        integer_parameter(bias, "bias (input 2)", length)
        rows = x.numel // length
        value = f"(int64_t){x.c_name}[base + j]"
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int64_t sum = 0, squares = 0;
    uint64_t root;
    for (int32_t j = 0; j < {length}; ++j) sum += {value};
    const int64_t mean = sum / {length};
    for (int32_t j = 0; j < {length}; ++j) squares += ({value} - mean) * ({value} - mean);
    {exact_isqrt(f"squares / {length} + 1", "root")}
    for (int32_t j = 0; j < {length}; ++j) {{
        const int64_t scaled = ((({value} - mean) * (int64_t){weight.c_name}[j]) / (int64_t)root
                                + (int64_t){bias.c_name}[j]) >> {shift};
        int32_t low = (int32_t)(scaled & 255);
        if (low > 127) low -= 256;
        {y.c_name}[base + j] = ({y.dtype.c_type})low;
    }}
}}"""
        return {"code": code, "size": x.numel * 4}


class IRmsNormParser(NodeParser):
    """iRMSNorm (§8, unverified): inputs x, weight [L]; attribute D (power of two); saturates to int8."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, weight, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        eight_bit_input(x, "iRMSNorm")
        shift = power_of_two_shift(node, "D")
        length = x.shape[-1]
        integer_parameter(weight, "weight (input 1)", length)
        rows = x.numel // length
        value = f"(int64_t){x.c_name}[base + j]"
        code = f"""for (int32_t r = 0; r < {rows}; ++r) {{
    const int32_t base = r * {length};
    int64_t squares = 0;
    uint64_t root;
    for (int32_t j = 0; j < {length}; ++j) squares += {value} * {value};
    {exact_isqrt(f"squares / {length} + 1", "root")}
    for (int32_t j = 0; j < {length}; ++j) {{
        int64_t scaled = (({value} * (int64_t){weight.c_name}[j]) / (int64_t)root) >> {shift};
        scaled = scaled < -128 ? -128 : (scaled > 127 ? 127 : scaled);
        {y.c_name}[base + j] = ({y.dtype.c_type})scaled;
    }}
}}"""
        return {"code": code, "size": x.numel * 3}


SCHEMAS: tuple[CustomOpSchema, ...] = (I_LAYER_NORM_SCHEMA, I_RMS_NORM_SCHEMA)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "iLayerNorm": (NodeMapper(ILayerNormParser(), (NodeBinding(ANY, INLINE),), name="iLayerNorm integer"),),
    "iRMSNorm": (NodeMapper(IRmsNormParser(), (NodeBinding(ANY, INLINE),), name="iRMSNorm integer"),),
}
