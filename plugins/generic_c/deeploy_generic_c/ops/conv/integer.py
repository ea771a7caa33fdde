"""Integer convolution in the raw integer domain (int32 out) and fused with its RequantShift (Deeploy's dialect).

8/16-bit data takes the fast kernels of :mod:`deeploy_generic_c.kernels.integer_conv` (im2col by output row,
pointwise, depthwise) with an int16 scratch buffer; any other layer is a direct loop written into the layer.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels import integer_conv as conv_kernels
from deeploy_generic_c.kernels.requantisation import Requantisation
from deeploy_generic_c.parsing.integer_bindings import ANY, WITH_SCRATCH, integer_mapper, require_integer_operand
from deeploy_generic_c.parsing.window import convolution_window


class IntegerConvParser(NodeParser):
    """1-D/2-D integer convolution, any groups, pads, strides, dilations, optional integer bias; int32 out."""

    inputs = (2, 3)
    requantised = False

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = list(node.inputs[:-2]) if self.requantised else list(node.inputs)
        x, w, y = ctxt[operands[0].name], ctxt[operands[1].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        require_integer_operand(w, "weights")
        win = convolution_window(node, x, w, y)
        n, c, h, wd, m, oh, ow = win.n, win.c, win.h, win.w, win.m, win.oh, win.ow
        strides, pads, dilations = (win.stride_h, win.stride_w), (win.pad_top, win.pad_left), (win.dil_h, win.dil_w)
        group = int(NodeParser.attribute(node, "group", 1))
        cg, mg = c // group, m // group
        bias = f"(int32_t){ctxt[operands[2].name].c_name}[mo]" if len(operands) > 2 and operands[2].name else "0"
        kh, kw = win.kh, win.kw
        bias_buffer = ctxt[operands[2].name] if len(operands) > 2 and operands[2].name else None
        requant = (Requantisation(node, ctxt, node.inputs[-2].name, node.inputs[-1].name, m)
                   if self.requantised else None)
        extra: dict[str, object] = {"requantization": requant.describe()} if requant is not None else {}
        macs = n * m * oh * ow * cg * kh * kw
        if conv_kernels.applies(x, w, ctxt.for_tiles):
            bound = conv_kernels.accumulator_bound(x, w, bias_buffer, m)

            def channel_store(target: str, acc: str, channel: str) -> str:
                if requant is None:
                    return f"{target} = ({y.dtype.c_type})({acc});"
                return requant.store(target, y.dtype.c_type, acc, channel, bound)

            ops = conv_kernels.ConvOperands(
                x, w, y, win, group,
                (lambda mo: f"(int32_t){bias_buffer.c_name}[{mo}]") if bias_buffer is not None else (lambda mo: "0"),
                channel_store)
            return {"code": conv_kernels.kernel(ops), "scratch": "NULL", "scratch_bytes": conv_kernels.scratch_bytes(ops),
                    "conv_kernel": conv_kernels.kind(ops), "macs": macs, "size": y.numel, **extra}
        target = f"{y.c_name}[((b * {m} + mo) * {oh} + oy) * {ow} + ox]"
        if requant is not None:
            store = requant.store(target, y.dtype.c_type, "acc", "mo")
        else:
            store = f"{target} = ({y.dtype.c_type})acc;"
        code = f"""for (int32_t b = 0; b < {n}; ++b) {{
    for (int32_t mo = 0; mo < {m}; ++mo) {{
        const int32_t g = mo / {mg};
        for (int32_t oy = 0; oy < {oh}; ++oy) {{
            for (int32_t ox = 0; ox < {ow}; ++ox) {{
                int32_t acc = {bias};
                for (int32_t ci = 0; ci < {cg}; ++ci) {{
                    const int32_t channel = g * {cg} + ci;
                    for (int32_t ky = 0; ky < {kh}; ++ky) {{
                        const int32_t iy = oy * {strides[0]} - {pads[0]} + ky * {dilations[0]};
                        if (iy < 0 || iy >= {h}) continue;
                        for (int32_t kx = 0; kx < {kw}; ++kx) {{
                            const int32_t ix = ox * {strides[1]} - {pads[1]} + kx * {dilations[1]};
                            if (ix < 0 || ix >= {wd}) continue;
                            acc += (int32_t){x.c_name}[((b * {c} + channel) * {h} + iy) * {wd} + ix]
                                 * (int32_t){w.c_name}[((mo * {cg} + ci) * {kh} + ky) * {kw} + kx];
                        }}
                    }}
                }}
                {store}
            }}
        }}
    }}
}}"""
        return {"code": code, "scratch": "NULL", "scratch_bytes": 0, "macs": macs, "size": y.numel, **extra}


class RequantizedConvParser(IntegerConvParser):
    """Conv fused with its RequantShift (inputs: x, w, [bias], mul, add): no int32 tensor in memory."""

    inputs = (4, 5)
    requantised = True


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Conv": (integer_mapper(IntegerConvParser(), "Conv integer", template=WITH_SCRATCH),),
    "RequantizedConv": (integer_mapper(RequantizedConvParser(), "Conv + RequantShift integer", ANY, WITH_SCRATCH),),
}
