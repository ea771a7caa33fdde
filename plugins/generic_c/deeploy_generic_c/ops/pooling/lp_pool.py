"""LpPool (any number of spatial axes; pads, auto_pad, strides, dilations, ceil_mode through the output shape) and
GlobalLpPool, float32 and float64.

``y = (sum over the window of |x|^p)^(1/p)``: padding adds nothing, as in ONNX
Runtime and the data of ONNX's node tests.  The window is walked with bounds
checks per tap (no padded copy), the sum in double; p = 1 and 2 avoid pow().
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, SlidingWindow, TileConstraint, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import reduction_code
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.strided import block, dense_strides
from deeploy_generic_c.parsing.window import resolve_pads


def power_terms(p: int) -> tuple[str, str]:
    """C for ``|v|^p`` (``{v}``: a double to fill in) and for the p-th root of ``acc``."""
    if p < 1:
        raise NodeMismatch("attribute", f"p={p} is not supported (p must be at least 1)")
    term = {1: "fabs({v})", 2: "{v} * {v}"}.get(p, f"pow(fabs({{v}}), {p}.0)")
    root = {1: "acc", 2: "sqrt(acc)"}.get(p, f"pow(acc, 1.0 / {p}.0)")
    return term, root


class LpPoolParser(NodeParser):
    """kernel_shape, p, pads/auto_pad, strides, dilations; any spatial rank."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        spatial, out_spatial = [int(d) for d in x.shape[2:]], [int(d) for d in y.shape[2:]]
        rank = len(spatial)
        if rank < 1:
            raise NodeMismatch("shape", "LpPool needs at least one spatial axis")
        kernel = [int(k) for k in NodeParser.attribute(node, "kernel_shape")]
        strides = [int(s) for s in (NodeParser.attribute(node, "strides", None) or [1] * rank)]
        dilations = [int(d) for d in (NodeParser.attribute(node, "dilations", None) or [1] * rank)]
        pads = resolve_pads(node, spatial, out_spatial, kernel, strides, dilations)
        term, root = power_terms(int(NodeParser.attribute(node, "p", 2)))
        planes = int(x.shape[0]) * int(x.shape[1])
        c_type = x.dtype.c_type
        in_strides = dense_strides(spatial)
        lines = [f"const {c_type} *src = (const {c_type} *){x.c_name};", f"{c_type} *dst = ({c_type} *){y.c_name};",
                 "int32_t o = 0;", f"for (int32_t n = 0; n < {planes}; ++n) {{",
                 f"    const {c_type} *plane = src + n * {math.prod(spatial)};"]
        indent = "    "
        for axis, size in enumerate(out_spatial):
            lines.append(f"{indent}for (int32_t y{axis} = 0; y{axis} < {size}; ++y{axis}) {{")
            indent += "    "
        lines.append(f"{indent}double acc = 0.0;")
        body_indent = indent
        for axis in range(rank):
            lines += [f"{indent}for (int32_t t{axis} = 0; t{axis} < {kernel[axis]}; ++t{axis}) {{",
                      f"{indent}    const int32_t p{axis} = y{axis} * {strides[axis]} - {pads[axis]} + "
                      f"t{axis} * {dilations[axis]};",
                      f"{indent}    if (p{axis} < 0 || p{axis} >= {spatial[axis]}) continue;"]
            indent += "    "
        position = " + ".join(f"p{axis} * {in_strides[axis]}" for axis in range(rank))
        lines += [f"{indent}const double v = plane[{position}];", f"{indent}acc += {term.format(v='v')};"]
        for _ in range(rank):
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        lines.append(f"{body_indent}dst[o++] = ({c_type})({root});")
        for _ in range(rank + 1):
            indent = indent[:-4]
            lines.append(f"{indent}}}")
        return {"call": block(lines), "size": y.numel * math.prod(kernel)}


class GlobalLpPoolParser(NodeParser):
    """p; every spatial axis."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        shape = tuple(int(d) for d in x.shape)
        if len(shape) < 3:
            raise NodeMismatch("shape", "GlobalLpPool needs at least one spatial axis")
        term, root = power_terms(int(NodeParser.attribute(node, "p", 2)))
        passes = [(["double acc = 0.0;"], f"acc += {term.format(v='(double)v')};")]
        finish = [f"dst[o] = ({y.dtype.c_type})({root});"]
        call = reduction_code(x.c_name, y.c_name, x.dtype, y.dtype, shape, set(range(2, len(shape))), passes, finish)
        return {"call": call, "size": x.numel}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))


def _mapper(parser: NodeParser, name: str, constraint: TileConstraint | None = None) -> tuple[NodeMapper, ...]:
    bindings = tuple(NodeBinding(NodeTypeChecker((t,), (t,)), TEMPLATE) for t in (dtypes.FLOAT32, dtypes.FLOAT64))
    return (NodeMapper(parser, bindings, name=name, tile_constraint=constraint),)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    # Pooling's window geometry: a tile reads its window rows, the clipped part becomes the tile's own padding.
    "LpPool": _mapper(LpPoolParser(), "LpPool float32/float64", SlidingWindow(weights=False)),
    "GlobalLpPool": _mapper(GlobalLpPoolParser(), "GlobalLpPool float32/float64"),
}

NODE_TESTED = ("LpPool", "GlobalLpPool")
