"""QuantizeLinear / DequantizeLinear (standard ONNX QDQ), per tensor or per axis.

Both follow ONNX Runtime's arithmetic exactly: quantisation divides in float32
and rounds half to even (``nearbyintf``) before adding the zero point and
saturating; dequantisation subtracts the zero point in int32 and multiplies by
the scale in float32.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.integer_bindings import INLINE


def _axis_layout(node: gs.Node, shape: tuple[int, ...], scale_size: int) -> tuple[int, int, int]:
    """(outer, channels, inner) of a per-axis (or per-tensor: channels = 1) quantisation parameter."""
    if scale_size == 1:
        return 1, 1, math.prod(shape)
    if int(NodeParser.attribute(node, "block_size", 0)):
        raise NodeMismatch("attribute", "blocked quantisation is not supported")
    axis = int(NodeParser.attribute(node, "axis", 1)) % len(shape)
    if shape[axis] != scale_size:
        raise NodeMismatch("shape", f"{scale_size} scales for axis {axis} of size {shape[axis]}")
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :])


class QuantizeLinearParser(NodeParser):
    """float32 → int8/uint8/int16/uint16, scale and zero point constant, per tensor or per axis."""

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, scale, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if not x.dtype.is_float or y.dtype.is_float or y.dtype.bits > 16:
            raise NodeMismatch("dtype", f"{x.dtype} → {y.dtype} is not supported (float32 → 8/16-bit integers)")
        if int(NodeParser.attribute(node, "saturate", 1)) != 1:
            raise NodeMismatch("attribute", "saturate=0 is not supported")
        zero = ctxt[node.inputs[2].name].c_name if NodeParser.is_present(node, 2) else None
        outer, channels, inner = _axis_layout(node, x.shape, scale.numel)
        info = np.iinfo(y.dtype.numpy)
        zp = f"(float){zero}[c]" if zero else "0.0f"
        code = f"""for (int32_t o = 0; o < {outer}; ++o) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        const float s = {scale.c_name}[c], z = {zp};
        const int32_t base = (o * {channels} + c) * {inner};
        for (int32_t i = 0; i < {inner}; ++i) {{
            float q = nearbyintf({x.c_name}[base + i] / s) + z;
            q = q < {info.min}.0f ? {info.min}.0f : (q > {info.max}.0f ? {info.max}.0f : q);
            {y.c_name}[base + i] = ({y.dtype.c_type})q;
        }}
    }}
}}"""
        scales = np.asarray(scale.values).reshape(-1).tolist() if scale.values is not None else None
        zeros = np.asarray(ctxt[node.inputs[2].name].values).reshape(-1).tolist() if zero and ctxt[node.inputs[2].name].values is not None else [0]
        report = {"scale": scales[0] if scales and len(scales) == 1 else scales,
                  "zero_point": zeros[0] if len(zeros) == 1 else zeros, "range": [int(info.min), int(info.max)]}
        return {"code": code, "size": x.numel * 3, "requantization": report}


class DequantizeLinearParser(NodeParser):
    """8/16/32-bit integers → float32, per tensor or per axis."""

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, scale, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if x.dtype.is_float or not y.dtype.is_float:
            raise NodeMismatch("dtype", f"{x.dtype} → {y.dtype} is not supported (integers → float32)")
        zero = ctxt[node.inputs[2].name].c_name if NodeParser.is_present(node, 2) else None
        outer, channels, inner = _axis_layout(node, x.shape, scale.numel)
        zp = f"(int32_t){zero}[c]" if zero else "0"
        code = f"""for (int32_t o = 0; o < {outer}; ++o) {{
    for (int32_t c = 0; c < {channels}; ++c) {{
        const float s = {scale.c_name}[c];
        const int32_t z = {zp};
        const int32_t base = (o * {channels} + c) * {inner};
        for (int32_t i = 0; i < {inner}; ++i) {y.c_name}[base + i] = (float)((int32_t){x.c_name}[base + i] - z) * s;
    }}
}}"""
        return {"code": code, "size": x.numel * 2}


ANY = NodeTypeChecker((None, None, None), (None,))
MAPPERS = {
    "QuantizeLinear": single_binding(QuantizeLinearParser(), ANY, "QuantizeLinear", INLINE),
    "DequantizeLinear": single_binding(DequantizeLinearParser(), ANY, "DequantizeLinear", INLINE),
}

