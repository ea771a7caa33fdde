"""GridSample (float32, any number of spatial axes): sample an image at the run-time coordinates of a grid.

Unlike Resize, the sampling positions are data, so the kernel computes them
per output element, in float as ONNX's reference does (it keeps them in a
float32 array): denormalise (``align_corners`` or not), round half to even
for ``nearest``, fold positions outside the image back in for ``border``
(clamp) and ``reflection`` (mirror at the borders, in double as the
reference's Python floats), then interpolate over 1 (nearest), 2 (linear) or
4 (cubic, a = -0.75) taps per axis, the last axis innermost, as the
reference nests its 1-D interpolations.  Taps outside the image read zero
(``zeros``), the edge (``border``) or their mirror image (``reflection``).
Every float-to-integer conversion is guarded, so a grid holding huge values or
NaN reads zeros instead of converting out of range.
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import HEADERS, single_binding

NODE_TESTED = ("GridSample",)

MODES = {"nearest": 1, "linear": 2, "bilinear": 2, "cubic": 4, "bicubic": 4}
"""Taps per axis of each mode (opset 16 spells linear and cubic ``bilinear`` and ``bicubic``)."""
PADDINGS = ("zeros", "border", "reflection")


def _text(node: gs.Node, name: str, default: str) -> str:
    value = NodeParser.attribute(node, name, default)
    return value.decode() if isinstance(value, bytes) else str(value)


def _reflect(value: str, low: float, high: float) -> list[str]:
    """Statements mirroring the double ``value`` at ``low`` and ``high`` until it lies between them."""
    if high == low:
        return [f"{value} = {low!r};"]
    span = high - low
    return [
        f"if ({value} < {low!r}) {{ const double dx = {low!r} - {value}; const double n = floor(dx / {span!r}); "
        f"const double r = dx - n * {span!r}; {value} = fmod(n, 2.0) == 0.0 ? {low!r} + r : {high!r} - r; }}",
        f"else if ({value} > {high!r}) {{ const double dx = {value} - {high!r}; const double n = floor(dx / {span!r}); "
        f"const double r = dx - n * {span!r}; {value} = fmod(n, 2.0) == 0.0 ? {high!r} - r : {low!r} + r; }}",
    ]


def _coefficients(taps: int, fraction: str, name: str) -> list[str]:
    """The tap weights at ``fraction`` (float) past the first full tap, in float as the reference computes."""
    if taps == 1:
        return [f"const float {name}[1] = {{1.0f}};"]
    if taps == 2:
        return [f"const float {name}[2] = {{1.0f - {fraction}, {fraction}}};"]
    a, f = "-0.75f", fraction
    return [
        f"const float {name}[4] = {{",
        f"    (({a} * ({f} + 1.0f) - 5.0f * {a}) * ({f} + 1.0f) + 8.0f * {a}) * ({f} + 1.0f) - 4.0f * {a},",
        f"    (({a} + 2.0f) * {f} - ({a} + 3.0f)) * {f} * {f} + 1.0f,",
        f"    (({a} + 2.0f) * (1.0f - {f}) - ({a} + 3.0f)) * (1.0f - {f}) * (1.0f - {f}) + 1.0f,",
        f"    (({a} * (2.0f - {f}) - 5.0f * {a}) * (2.0f - {f}) + 8.0f * {a}) * (2.0f - {f}) - 4.0f * {a}}};",
    ]


def grid_sample_code(x: str, grid: str, y: str, x_shape: tuple[int, ...], points: int, taps: int, padding: str,
                     align_corners: bool) -> str:
    """The C statements of one layer (``points``: output positions per image)."""
    batch, channels, dims = x_shape[0], x_shape[1], list(x_shape[2:])
    rank, image = len(dims), math.prod(x_shape[2:])
    strides = [math.prod(dims[axis + 1:]) for axis in range(rank)]
    low = [0.0 if align_corners else -0.5] * rank
    high = [dim - 1.0 if align_corners else dim - 0.5 for dim in dims]
    lines = ["{", "    const float *dcg_gs_x = (const float *)" + x + ";",
             "    const float *dcg_gs_g = (const float *)" + grid + ";", "    float *dcg_gs_y = (float *)" + y + ";",
             f"    for (int32_t n = 0; n < {batch}; ++n) {{",
             f"        for (int32_t o = 0; o < {points}; ++o) {{",
             f"            const float *at = dcg_gs_g + (n * {points} + o) * {rank};"]
    indent = "            "
    for axis, dim in enumerate(dims):
        normalised = f"at[{rank - 1 - axis}]"  # the grid lists the last spatial axis first
        denormalised = (f"({normalised} + 1.0f) / 2.0f * {float(dim - 1)!r}f" if align_corners
                        else f"(({normalised} + 1.0f) * {float(dim)!r}f - 1.0f) / 2.0f")
        lines.append(f"{indent}float c{axis} = {denormalised};")
        if taps == 1:
            lines.append(f"{indent}c{axis} = rintf(c{axis});")
        if padding == "border":
            lines.append(f"{indent}if (c{axis} < {low[axis]!r}f || c{axis} > {high[axis]!r}f) "
                         f"c{axis} = c{axis} < 0.0f ? 0.0f : c{axis} > {float(dim - 1)!r}f ? {float(dim - 1)!r}f : c{axis};")
        elif padding == "reflection":
            lines.append(f"{indent}{{ double m = c{axis}; " + " ".join(_reflect("m", low[axis], high[axis]))
                         + f" c{axis} = (float)m; }}")
        # the first tap; coordinates beyond any tap of the image (or NaN) are parked where all taps read outside
        first = "(int32_t)c" if taps == 1 else "(int32_t)floorf(c"
        close = "" if taps == 1 else ")"
        back = (taps - 1) // 2 if taps > 1 else 0
        lines.append(f"{indent}const int32_t f{axis} = (c{axis} >= -8.0f && c{axis} <= {float(dim + 8)!r}f) ? "
                     f"{first}{axis}{close} - {back} : -16;")
        if taps > 1:
            lines.append(f"{indent}const float r{axis} = (c{axis} >= -8.0f && c{axis} <= {float(dim + 8)!r}f) ? "
                         f"c{axis} - floorf(c{axis}) : 0.0f;")
        lines += [indent + line for line in _coefficients(taps, f"r{axis}", f"w{axis}")]
    lines.append(f"{indent}for (int32_t ch = 0; ch < {channels}; ++ch) {{")
    lines.append(f"{indent}    const float *img = dcg_gs_x + (n * {channels} + ch) * {image};")
    inner = indent + "    "
    for axis in range(rank):
        lines.append(f"{inner}float v{axis} = 0.0f;")
        lines.append(f"{inner}for (int32_t t{axis} = 0; t{axis} < {taps}; ++t{axis}) {{")
        inner += "    "
        lines.append(f"{inner}int32_t j{axis} = f{axis} + t{axis};")
        if padding == "border":
            lines.append(f"{inner}j{axis} = j{axis} < 0 ? 0 : j{axis} > {dims[axis] - 1} ? {dims[axis] - 1} : j{axis};")
        elif padding == "reflection":
            lines.append(f"{inner}{{ double m = j{axis}; " + " ".join(_reflect("m", low[axis], high[axis]))
                         + f" j{axis} = (int32_t)m; }}")
    inside = " && ".join(f"j{axis} >= 0 && j{axis} < {dims[axis]}" for axis in range(rank))
    at = " + ".join(f"j{axis} * {strides[axis]}" if strides[axis] != 1 else f"j{axis}" for axis in range(rank))
    lines.append(f"{inner}const float p = ({inside}) ? img[{at}] : 0.0f;")
    value = "p"
    for axis in range(rank - 1, -1, -1):
        lines.append(f"{inner}v{axis} += w{axis}[t{axis}] * {value};")
        inner = inner[4:]
        lines.append(f"{inner}}}")
        value = f"v{axis}"
    lines.append(f"{inner}dcg_gs_y[(n * {channels} + ch) * {points} + o] = v0;")
    lines += [f"{indent}}}", "        }", "    }", "}"]
    return "\n".join(lines)


class GridSampleParser(NodeParser):
    """Run-time grid; modes nearest, linear, cubic; paddings zeros, border, reflection; align_corners."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, grid, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        mode, padding = _text(node, "mode", "linear"), _text(node, "padding_mode", "zeros")
        if mode not in MODES:
            raise NodeMismatch("attribute", f"mode={mode!r} is not one of {', '.join(MODES)}")
        if padding not in PADDINGS:
            raise NodeMismatch("attribute", f"padding_mode={padding!r} is not one of {', '.join(PADDINGS)}")
        rank = len(x.shape) - 2
        if rank < 1 or len(grid.shape) != rank + 2 or grid.shape[-1] != rank or grid.shape[0] != x.shape[0]:
            raise NodeMismatch("shape", f"grid {list(grid.shape)} does not sample an image {list(x.shape)}")
        points = math.prod(grid.shape[1:-1])
        if y.numel == 0:
            return {"call": "", "size": 0}
        code = grid_sample_code(x.c_name, grid.c_name, y.c_name, tuple(x.shape), points, MODES[mode], padding,
                                bool(int(NodeParser.attribute(node, "align_corners", 0))))
        return {"call": code, "size": y.numel * MODES[mode] ** rank}


GRID_SAMPLE = NodeTemplate("${call}", headers=(*HEADERS, "math.h"))

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "GridSample": single_binding(GridSampleParser(), NodeTypeChecker((dtypes.FLOAT32, dtypes.FLOAT32), (dtypes.FLOAT32,)),
                                 "GridSample float32", GRID_SAMPLE),
}
