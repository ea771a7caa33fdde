"""Pooling (float32): max/average over 1-D or 2-D windows, and global pooling."""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS, single_binding
from deeploy_generic_c.parsing.window import sliding_window


def _clip(axis: str, origin: str, dil: int, taps: int, size: int, indent: str) -> list[str]:
    """``{axis}_lo``/``{axis}_hi``: the taps k with ``origin + k * dil`` inside ``[0, size)`` (possibly none)."""
    if dil == 1:
        return [f"{indent}const int32_t {axis}_lo = {origin} < 0 ? -{origin} : 0;",
                f"{indent}const int32_t {axis}_hi = {size} - {origin} < {taps} ? {size} - {origin} : {taps};"]
    return [f"{indent}const int32_t {axis}_lo = {origin} < 0 ? (-{origin} + {dil - 1}) / {dil} : 0;",
            f"{indent}const int32_t {axis}_end = {size} - {origin} <= 0 ? 0 : ({size} - {origin} + {dil - 1}) / {dil};",
            f"{indent}const int32_t {axis}_hi = {axis}_end < {taps} ? {axis}_end : {taps};"]


def maxpool_loop(x: str, y: str, planes: int, h: int, w: int, oh: int, ow: int, kh: int, kw: int, stride_h: int,
                 stride_w: int, pad_top: int, pad_left: int, dil_h: int, dil_w: int) -> str:
    """Max pooling as loops in the layer with its constant shapes.

    Why: dcg_maxpool2d_f32 with its helpers is ~1.3 KB of x86-64 code for every window
    shape; a layer's own loop (windows clipped per row and column, a select rather than
    a branch on the data, a NaN kept once taken as in ONNX Runtime) is a few hundred bytes.
    Empty clipped ranges leave -INFINITY, as the kernel does.
    """
    lines = [
        f"for (int32_t p = 0; p < {planes}; ++p) {{",
        f"    const float *xp = {x} + p * {h * w};",
        f"    float *yp = {y} + p * {oh * ow};",
        f"    for (int32_t oy = 0; oy < {oh}; ++oy) {{",
        f"        const int32_t iy0 = oy * {stride_h} - {pad_top};",
        *_clip("ky", "iy0", dil_h, kh, h, "        "),
        f"        for (int32_t ox = 0; ox < {ow}; ++ox) {{",
        f"            const int32_t ix0 = ox * {stride_w} - {pad_left};",
        *_clip("kx", "ix0", dil_w, kw, w, "            "),
        "            float best = -INFINITY;",
        "            for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {",
        "                for (int32_t kx = kx_lo; kx < kx_hi; ++kx) {",
        f"                    const float v = xp[(iy0 + ky * {dil_h}) * {w} + ix0 + kx * {dil_w}];",
        "                    best = (v > best || v != v) ? v : best;",
        "                }",
        "            }",
        f"            yp[oy * {ow} + ox] = best;",
        "        }",
        "    }",
        "}",
    ]
    return "\n".join(lines)


class PoolParser(NodeParser):
    """1-D or 2-D windows; pads, strides, ceil_mode (through the output shape); dilations for max pooling."""

    outputs = (1, 1)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        win = sliding_window(node, x, y, [int(k) for k in NodeParser.attribute(node, "kernel_shape")], "pooling")
        if self.kind == "avg" and (win.dil_h, win.dil_w) != (1, 1):
            raise NodeMismatch("attribute", "dilated average pooling is not supported")
        common = (
            f"{x.c_name}, {y.c_name}, {win.n}, {win.c}, {win.h}, {win.w}, {win.oh}, {win.ow}, {win.kh}, {win.kw}, "
            f"{win.stride_h}, {win.stride_w}, {win.pad_top}, {win.pad_left}"
        )
        if self.kind == "max":
            call = maxpool_loop(x.c_name, y.c_name, win.n * win.c, win.h, win.w, win.oh, win.ow, win.kh, win.kw,
                                win.stride_h, win.stride_w, win.pad_top, win.pad_left, win.dil_h, win.dil_w)
        else:
            include = int(NodeParser.attribute(node, "count_include_pad", 0))
            call = f"dcg_avgpool2d_f32({common}, {win.pad_bottom}, {win.pad_right}, {include});"
        return {"call": call, "size": y.numel * win.kh * win.kw}


class MaxPoolParser(PoolParser):
    """1-D or 2-D max pooling; the Indices output is not supported."""

    outputs = (1, 2)

    def __init__(self) -> None:
        super().__init__("max")

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        if len(node.outputs) > 1 and node.outputs[1].name:
            raise NodeMismatch("shape", "the Indices output is not supported")
        if int(NodeParser.attribute(node, "storage_order", 0)):
            raise NodeMismatch("attribute", "storage_order=1 is not supported")
        return super().parse(node, ctxt)


class GlobalPoolParser(NodeParser):
    """Any rank >= 3."""

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        nc, spatial = math.prod(x.shape[:2]), math.prod(x.shape[2:])
        return {"call": f"dcg_{self.kernel}_f32({x.c_name}, {y.c_name}, {nc}, {spatial});", "size": x.numel}


FLOAT = NodeTypeChecker((dtypes.FLOAT32,), (dtypes.FLOAT32, None))


def _mapper(parser: NodeParser, name: str) -> tuple[NodeMapper, ...]:
    return single_binding(parser, FLOAT, name)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MaxPool": single_binding(MaxPoolParser(), FLOAT, "MaxPool float32",
                              NodeTemplate("${call}", headers=HEADERS + ("math.h",))),
    "AveragePool": _mapper(PoolParser("avg"), "AveragePool float32"),
    "GlobalAveragePool": _mapper(GlobalPoolParser("global_avgpool"), "GlobalAveragePool float32"),
    "GlobalMaxPool": _mapper(GlobalPoolParser("global_maxpool"), "GlobalMaxPool float32"),
}
