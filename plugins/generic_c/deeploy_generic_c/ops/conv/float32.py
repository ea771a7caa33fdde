"""Float32 convolution: Conv through the runtime's blocked im2col GEMM or a direct loop in the layer, ConvTranspose."""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS, single_binding
from deeploy_generic_c.kernels.direct_conv import DirectConv, direct_conv, takes_direct_path
from deeploy_generic_c.parsing.window import convolution_window


CONV_SCRATCH_BYTES = 8192
"""Bound on a float conv's im2col scratch: a layer whose whole im2col is larger gathers blocks of output positions."""

CONV_MIN_BLOCK = 64
"""Fewest output positions per block: shorter blocks spend more on the GEMM's packing than they save in memory."""

TILED_DIRECT_PATCH_BYTES = 2048
"""Tiled builds write a float conv as a direct loop (no scratch) when one output position's im2col column is larger:
a tile's im2col would need at least that much compute-level memory per core (a cluster keeps one copy per core),
so a deep layer (ResNet-18's 512-channel 3x3 convs: 18 KiB per position, 147 KiB on 8 cores) could not be tiled
into a 64 KiB L1 at all.  The choice depends on the input channels and the window only, which every tile shares."""


def conv_block(c: int, kh: int, kw: int, oh: int, ow: int, group: int) -> int:
    """Output positions one im2col block gathers (``oh * ow``: the whole layer at once).

    Whole-layer im2col when it fits :data:`CONV_SCRATCH_BYTES`; otherwise as many
    positions as fit, a multiple of 8 (the GEMM's register tile width), at least
    :data:`CONV_MIN_BLOCK`.  The scratch grows with the output positions only (not
    the channels), and a tile's never exceeds its whole im2col.
    """
    patch, spatial = (c // group) * kh * kw, oh * ow
    if patch * spatial * 4 <= CONV_SCRATCH_BYTES:
        return spatial
    return min(spatial, max(CONV_MIN_BLOCK, CONV_SCRATCH_BYTES // (patch * 4) // 8 * 8))


def conv_scratch_floats(c: int, m: int, kh: int, kw: int, oh: int, ow: int, strides, pads, dilations, group: int,
                        block: int) -> int:
    """Mirror of dcg_conv2d_scratch_floats(): none for depthwise and pointwise, else the im2col of one block."""
    if group == c == m:
        return 0
    if kh == kw == 1 and all(s == 1 for s in strides) and not any(pads) and all(d == 1 for d in dilations):
        return 0
    return (c // group) * kh * kw * min(block, oh * ow)


class ConvParser(NodeParser):
    """1-D or 2-D, any groups, explicit pads (auto_pad NOTSET/VALID/SAME_*), strides, dilations, optional bias.

    Few output channels per group: a direct loop in the layer (ops/kernels/direct_conv.py); otherwise runtime/src/conv.c's
    bounded im2col and blocked GEMM, whose gather pays off only when many output channels reuse it.  Tiled builds
    (``ctxt.for_tiles``) keep the im2col path for every tile: the choice must not depend on a tile's channel count,
    or the tiler's scratch model (probed on the whole layer and the smallest tile) misses the im2col scratch of
    mid-size tiles and L1 overflows.
    """

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, w, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        win = convolution_window(node, x, w, y)
        group = int(NodeParser.attribute(node, "group", 1))
        bias = ctxt[node.inputs[2].name].c_name if NodeParser.is_present(node, 2) else "NULL"
        macs = win.n * win.m * win.oh * win.ow * (win.c // group) * win.kh * win.kw
        block = conv_block(win.c, win.kh, win.kw, win.oh, win.ow, group)
        scratch = conv_scratch_floats(win.c, win.m, win.kh, win.kw, win.oh, win.ow, (win.stride_h, win.stride_w),
                                      win.pads, (win.dil_h, win.dil_w), group, block)
        code, path = "", "im2col"
        deep = (win.c // group) * win.kh * win.kw * 4 > TILED_DIRECT_PATCH_BYTES and scratch > 0
        if (takes_direct_path(win.m, group) and not ctxt.for_tiles) or (ctxt.for_tiles and deep):
            code, path, block, scratch = direct_conv(DirectConv(
                x.c_name, w.c_name, None if bias == "NULL" else bias, y.c_name, win.n, win.c, win.h, win.w, win.m,
                win.kh, win.kw, win.oh, win.ow, win.stride_h, win.stride_w, win.pad_top, win.pad_left, win.dil_h,
                win.dil_w, group)), "direct", 0, 0
        return {
            "X": x.c_name, "W": w.c_name, "B": bias, "Y": y.c_name,
            "N": win.n, "C": win.c, "H": win.h, "Wd": win.w, "M": win.m, "KH": win.kh, "KW": win.kw,
            "OH": win.oh, "OW": win.ow, "stride_h": win.stride_h, "stride_w": win.stride_w,
            "pad_top": win.pad_top, "pad_left": win.pad_left, "dil_h": win.dil_h, "dil_w": win.dil_w, "group": group,
            "block": block, "scratch_bytes": scratch * 4, "scratch": "NULL", "code": code, "conv_path": path,
            "macs": macs, "size": y.numel,
        }


CONV = NodeTemplate(
    "% if code:\n${code}\n% else:\n"
    "dcg_conv2d_f32(${X}, ${W}, ${B}, ${Y}, ${N}, ${C}, ${H}, ${Wd}, ${M}, ${KH}, ${KW}, ${OH}, ${OW}, "
    "${stride_h}, ${stride_w}, ${pad_top}, ${pad_left}, ${dil_h}, ${dil_w}, ${group}, ${block}, (float *)${scratch});\n"
    "% endif\n",
    headers=HEADERS,
    transients=lambda rep: {"scratch": rep["scratch_bytes"]},
)


class ConvTransposeParser(NodeParser):
    """1-D or 2-D, groups, strides, pads, dilations, output_padding (through the output shape)."""

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, w, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        rank = len(x.shape) - 2
        if rank not in (1, 2):
            raise NodeMismatch("shape", f"{rank}-D transposed convolution is not supported")
        auto_pad = NodeParser.attribute(node, "auto_pad", "NOTSET")
        if auto_pad not in ("NOTSET", "", "VALID"):
            raise NodeMismatch("attribute", f"auto_pad={auto_pad} is not supported")
        strides = [int(v) for v in (NodeParser.attribute(node, "strides", None) or [1] * rank)]
        dilations = [int(v) for v in (NodeParser.attribute(node, "dilations", None) or [1] * rank)]
        pads = [int(p) for p in (NodeParser.attribute(node, "pads", None) or [0] * (2 * rank))]
        if NodeParser.attribute(node, "output_shape", None):
            raise NodeMismatch("attribute", "output_shape is not supported (give pads)")
        kernel = list(w.shape[2:])
        if rank == 1:
            strides, dilations, kernel, pads = [1, *strides], [1, *dilations], [1, *kernel], [0, pads[0], 0, pads[1]]
        n, c, *in_spatial = x.shape
        m = y.shape[1]
        h, wd = (1, in_spatial[0]) if rank == 1 else in_spatial
        oh, ow = (1, y.shape[2]) if rank == 1 else y.shape[2:]
        group = int(NodeParser.attribute(node, "group", 1))
        bias = ctxt[node.inputs[2].name].c_name if NodeParser.is_present(node, 2) else "NULL"
        return {
            "call": (
                f"dcg_conv_transpose2d_f32({x.c_name}, {w.c_name}, {bias}, {y.c_name}, {n}, {c}, {h}, {wd}, {m}, "
                f"{kernel[0]}, {kernel[1]}, {oh}, {ow}, {strides[0]}, {strides[1]}, {pads[0]}, {pads[1]}, "
                f"{dilations[0]}, {dilations[1]}, {group});"
            ),
            "macs": n * c * h * wd * (m // group) * kernel[0] * kernel[1], "size": y.numel,
        }


F32 = dtypes.FLOAT32
THREE_FLOATS = NodeTypeChecker((F32, F32, F32), (F32,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Conv": single_binding(ConvParser(), THREE_FLOATS, "Conv float32", CONV),
    "ConvTranspose": single_binding(ConvTransposeParser(), THREE_FLOATS, "ConvTranspose float32"),
}
