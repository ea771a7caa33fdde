"""Integer max pooling (raw integer domain): 1-D/2-D windows, pads ignored (as -inf), dilations, any strides.

The loop is written into the layer with the operands' exact C types, the running maximum in int32, so one
template serves every integer element type.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper, require_integer_operand
from deeploy_generic_c.parsing.window import sliding_window


class IntegerMaxPoolParser(NodeParser):
    """1-D/2-D max pooling on integers (pads ignored as -inf, dilations, any strides)."""

    outputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        require_integer_operand(x, "input 0")
        if len(node.outputs) > 1 and node.outputs[1].name:
            raise NodeMismatch("shape", "the Indices output is not supported")
        win = sliding_window(node, x, y, [int(v) for v in NodeParser.attribute(node, "kernel_shape")], "pooling")
        planes, h, wd, oh, ow = win.n * win.c, win.h, win.w, win.oh, win.ow
        kernel, strides = (win.kh, win.kw), (win.stride_h, win.stride_w)
        pads, dilations = (win.pad_top, win.pad_left), (win.dil_h, win.dil_w)
        code = f"""for (int32_t p = 0; p < {planes}; ++p) {{
    for (int32_t oy = 0; oy < {oh}; ++oy) {{
        for (int32_t ox = 0; ox < {ow}; ++ox) {{
            int32_t best = INT32_MIN;
            for (int32_t ky = 0; ky < {kernel[0]}; ++ky) {{
                const int32_t iy = oy * {strides[0]} - {pads[0]} + ky * {dilations[0]};
                if (iy < 0 || iy >= {h}) continue;
                for (int32_t kx = 0; kx < {kernel[1]}; ++kx) {{
                    const int32_t ix = ox * {strides[1]} - {pads[1]} + kx * {dilations[1]};
                    if (ix < 0 || ix >= {wd}) continue;
                    const int32_t v = (int32_t){x.c_name}[(p * {h} + iy) * {wd} + ix];
                    best = v > best ? v : best;
                }}
            }}
            {y.c_name}[(p * {oh} + oy) * {ow} + ox] = ({y.dtype.c_type})best;
        }}
    }}
}}"""
        return {"code": code, "size": y.numel * kernel[0] * kernel[1]}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MaxPool": (integer_mapper(IntegerMaxPoolParser(), "MaxPool integer", ANY),),
}
