"""Convolution and matrix products (float32)."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS, broadcast_strides, c_float, int_array, single_binding
from deeploy_generic_c.kernels.direct_conv import DirectConv, direct_conv, takes_direct_path
from deeploy_generic_c.kernels.loops import SMALL_PRODUCT_MACS, gemm_loop, matmul_loop
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


INLINE_PRODUCT_MACS = 32768
"""MatMuls with a multiple of 8 columns up to this many multiply-accumulates are loops in the layer too (beyond
SMALL_PRODUCT_MACS): their blocks of two 4-float vector accumulators (kernels/loops.py) stay in registers, run about as
fast as the blocked kernel's packing and tiles on operands this small (CCT_1_16_16_8's attention products,
64 x 64 x 8 and 64 x 8 x 64: the network went from 1.24x to 1.23x of 080000f with gcc, 1.31x to 1.33x with
clang) and cost ~150 bytes of code each instead of linking the ~4.6 KB blocked GEMM."""


def inline_product(macs: int, n: int) -> bool:
    """Whether a float MatMul of ``macs`` multiply-accumulates and ``n`` output columns is written in the layer."""
    return macs <= SMALL_PRODUCT_MACS or (n % 8 == 0 and macs <= INLINE_PRODUCT_MACS)


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


class GemmParser(NodeParser):
    """transA/transB, alpha, beta, optional C broadcast over rows or columns."""

    inputs = (2, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        trans_a, trans_b = int(NodeParser.attribute(node, "transA", 0)), int(NodeParser.attribute(node, "transB", 0))
        m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
        n = b.shape[0] if trans_b else b.shape[1]
        c_name, rows, cols = "NULL", 1, 1
        if NodeParser.is_present(node, 2):
            c = ctxt[node.inputs[2].name]
            shape = (1,) * (2 - len(c.shape)) + tuple(c.shape)
            rows, cols = shape
            if rows not in (1, m) or cols not in (1, n):
                raise NodeMismatch("shape", f"C of shape {c.shape} does not broadcast to [{m}, {n}]")
            c_name = c.c_name
        alpha, beta = float(NodeParser.attribute(node, "alpha", 1.0)), float(NodeParser.attribute(node, "beta", 1.0))
        if m * n * k <= SMALL_PRODUCT_MACS:
            c_used = c_name if c_name != "NULL" and beta != 0.0 else None
            return {"call": gemm_loop(a.c_name, b.c_name, c_used, y.c_name, m, n, k, bool(trans_a), bool(trans_b),
                                      alpha, beta, rows, cols), "macs": m * n * k, "size": y.numel}
        return {
            "call": (
                f"dcg_gemm_f32({a.c_name}, {b.c_name}, {c_name}, {y.c_name}, {m}, {n}, {k}, {trans_a}, {trans_b}, "
                f"{c_float(alpha)}, {c_float(beta)}, {rows}, {cols});"
            ),
            "macs": m * n * k, "size": y.numel,
        }


class MatMulParser(NodeParser):
    """numpy matmul semantics: 1-D operands promoted, batch dimensions broadcast."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        a_shape = (1, *a.shape) if len(a.shape) == 1 else tuple(a.shape)
        b_shape = (*b.shape, 1) if len(b.shape) == 1 else tuple(b.shape)
        m, k = a_shape[-2:]
        n = b_shape[-1]
        batch = tuple(int(d) for d in _broadcast_shape(a_shape[:-2], b_shape[:-2]))
        a_strides = broadcast_strides(a_shape[:-2], batch)
        b_strides = broadcast_strides(b_shape[:-2], batch)
        if inline_product(math.prod(batch) * m * n * k, n):
            return {"call": matmul_loop(a.c_name, b.c_name, y.c_name, m, n, k, batch, a_strides, b_strides),
                    "macs": math.prod(batch) * m * n * k, "size": y.numel}
        return {
            "call": (
                f"dcg_matmul_f32({a.c_name}, {b.c_name}, {y.c_name}, {m}, {n}, {k}, {len(batch)}, "
                f"{int_array(batch)}, {int_array(a_strides)}, {int_array(b_strides)});"
            ),
            "macs": math.prod(batch) * m * n * k, "size": y.numel,
        }


def _broadcast_shape(first: tuple[int, ...], second: tuple[int, ...]) -> list[int]:
    rank = max(len(first), len(second))
    a = (1,) * (rank - len(first)) + first
    b = (1,) * (rank - len(second)) + second
    out = []
    for x, z in zip(a, b):
        if x != z and 1 not in (x, z):
            raise NodeMismatch("shape", f"batch dimensions {first} and {second} do not broadcast")
        out.append(max(x, z))
    return out


F32 = dtypes.FLOAT32
THREE_FLOATS = NodeTypeChecker((F32, F32, F32), (F32,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Conv": single_binding(ConvParser(), THREE_FLOATS, "Conv float32", CONV),
    "ConvTranspose": single_binding(ConvTransposeParser(), THREE_FLOATS, "ConvTranspose float32"),
    "Gemm": single_binding(GemmParser(), THREE_FLOATS, "Gemm float32"),
    "MatMul": single_binding(MatMulParser(), NodeTypeChecker((F32, F32), (F32,)), "MatMul float32"),
}
