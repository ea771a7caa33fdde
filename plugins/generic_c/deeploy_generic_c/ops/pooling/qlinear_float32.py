"""Exact mode's average pools: ONNX Runtime's unfused DequantizeLinear → AveragePool → QuantizeLinear, bit for bit.

The lowering marks these nodes ``requantization="float32"``.  ONNX Runtime does not fuse the pool; it
dequantises, runs its float kernel and quantises.  This kernel does the same in float32
(:mod:`~deeploy_generic_c.kernels.exact_quantisation` says how the dequantisation and quantisation stay exact
under any contraction setting) and sums in the order of MLAS's ``MlasPool``, which picks one of three kernels
with different summation orders:

- *global* when the kernel covers the whole input with unit strides and no padding (also every
  GlobalAveragePool): four lane sums over the first ``4·⌊n/4⌋`` elements (lane ``j`` takes elements ``j, j+4,
  …`` in order), reduced as ``(l0 + l2) + (l1 + l3)``, then the remaining elements added one by one, then
  divided by ``n``;
- *vector* (2-D, width stride ≤ 2, every kernel extent ≤ 32, padded width within its 2045-float row buffer):
  each window column summed down its valid rows, then the column sums added left to right;
- *generic* otherwise: one running sum over the valid window, row by row;

then divided by the kernel area (``count_include_pad=1``) or the number of valid elements (``0``).  Summation
starts from the first value (MLAS starts from 0.0 or from padding zeros, which adds nothing).  Dilated windows
and ``ceil_mode`` are refused (ONNX Runtime runs other code for them).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.exact_quantisation import DequantTable, ExactQuantiser
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types, input_zero_point, unary_operands
from deeploy_generic_c.parsing.requantising import EXACT_TEMPLATE, exact_mode, output_range
from deeploy_generic_c.parsing.window import Window, sliding_window

REDUCTION_BUFFER = 2048 - 3
"""Floats of MLAS's pooling row buffer (2048 on the stack, three kept for reading a whole vector past the end)."""
SMALL_KERNEL = 32
"""MLAS's vector pooling kernel takes kernel extents up to 32 (the divisor stays exact in float)."""


def mlas_pool_path(kernel: list[int], strides: list[int], spatial: list[int], pads: list[int]) -> str:
    """Which of MLAS's pooling kernels ONNX Runtime runs for a layer: ``global``, ``vector`` or ``generic``.

    ``spatial`` and ``pads`` (all begins, then all ends) are the whole layer's, as ``MlasPool`` sees them.
    """
    rank = len(kernel)
    if kernel == spatial and all(s == 1 for s in strides) and not any(pads):
        return "global"
    if rank >= 2 and strides[-1] <= 2 and all(k <= SMALL_KERNEL for k in kernel):
        remaining = REDUCTION_BUFFER
        for pad in (pads[rank - 1], pads[2 * rank - 1]):
            remaining = remaining - pad if remaining >= pad else 0
        if remaining >= spatial[-1]:
            return "vector"
    return "generic"


class QLinearAveragePoolFloat32Parser(NodeParser):
    """QLinearAveragePool / QLinearGlobalAveragePool in MLAS's summation order (1-D and 2-D, NCHW)."""

    inputs = (4, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        exact_mode(node)
        (x, x_scale, x_zero), (y, y_scale, y_zero) = unary_operands(ctxt, node)
        if int(NodeParser.attribute(node, "channels_last", 0)):
            raise NodeMismatch("attribute", "channels_last=1 is not supported (NCHW only)")
        table = DequantTable("dq_x", x, float(x_scale[0]), input_zero_point(x_zero))
        quantiser = ExactQuantiser(y_scale, y, y_zero, *output_range(node, y))
        rank = len(x.shape) - 2
        window_node = node
        if node.op == "QLinearGlobalAveragePool":
            kernel, strides = list(x.shape[2:]), [1] * rank
            window_node = gs.Node("AveragePool", attrs={"kernel_shape": kernel}, inputs=node.inputs,
                                  outputs=node.outputs)
        else:
            kernel = [int(v) for v in NodeParser.attribute(node, "kernel_shape")]
            strides = [int(v) for v in (NodeParser.attribute(node, "strides", None) or [1] * rank)]
            if int(NodeParser.attribute(node, "ceil_mode", 0)):
                raise NodeMismatch("attribute", "ceil_mode=1 is not supported in exact mode")
            if any(int(d) != 1 for d in (NodeParser.attribute(node, "dilations", None) or [])):
                raise NodeMismatch("attribute", "dilations other than 1 are not supported in exact mode")
        win = sliding_window(window_node, x, y, kernel, "pooling")
        # A tile's node names the whole layer's geometry (deeploy_core.tiling.qlinear_exact): MLAS chose its
        # kernel for the layer, not for the tile.
        spatial = [int(v) for v in NodeParser.attribute(node, "layer_input_spatial", None) or list(x.shape[2:])]
        own_pads = [win.pad_left, win.pad_right] if rank == 1 else [win.pad_top, win.pad_left, win.pad_bottom,
                                                                      win.pad_right]
        pads = [int(v) for v in NodeParser.attribute(node, "layer_pads", None) or own_pads]
        path = mlas_pool_path(kernel, strides, spatial, pads)
        if path == "global" and [win.h, win.w][2 - rank:] != kernel:
            raise NodeMismatch("shape", "a tile of a global pool must hold the whole plane")
        include_pad = bool(int(NodeParser.attribute(window_node, "count_include_pad", 0))) or not any(win.pads)
        if path == "global":
            code = _global_pool(win, x.c_name, y.c_name, table, quantiser)
        else:
            code = _window_pool(win, x.c_name, y.c_name, table, quantiser, path == "vector", include_pad)
        return {"code": code, "size": y.numel * win.kh * win.kw,
                "requantization": quantiser.describe(input_scale=float(x_scale[0]), summation=path,
                                                     divisor="kernel area" if include_pad else "valid elements")}


def _global_pool(win: Window, x: str, y: str, table: DequantTable, quantiser: ExactQuantiser) -> str:
    size = win.h * win.w
    return f"""{{
{table.declaration()}
for (int32_t p = 0; p < {win.n * win.c}; ++p) {{
    const int32_t base = p * {size};
    float lane[4] = {{0.0f, 0.0f, 0.0f, 0.0f}};
    int32_t i = 0;
    for (; i + 4 <= {size}; i += 4) {{
        lane[0] = lane[0] + {table.at(f"{x}[base + i]")};
        lane[1] = lane[1] + {table.at(f"{x}[base + i + 1]")};
        lane[2] = lane[2] + {table.at(f"{x}[base + i + 2]")};
        lane[3] = lane[3] + {table.at(f"{x}[base + i + 3]")};
    }}
    const float even = lane[0] + lane[2];
    const float odd = lane[1] + lane[3];
    float sum = even + odd;
    for (; i < {size}; ++i) sum = sum + {table.at(f"{x}[base + i]")};
    const float mean = sum / {float(size)!r}f;
    {quantiser.store(f"{y}[p]", "mean")}
}}
}}"""


def _window_pool(win: Window, x: str, y: str, table: DequantTable, quantiser: ExactQuantiser, columns_first: bool,
                 include_pad: bool) -> str:
    """A sliding-window mean: column sums first (MLAS's vector kernel) or one running sum row by row (generic)."""
    element = table.at(f"{x}[(p * {win.h} + iy) * {win.w} + ix]")
    if columns_first:
        reduction = f"""for (int32_t ix = x0; ix < x1; ++ix) {{
                int32_t iy = y0;
                float column = {element};
                for (++iy; iy < y1; ++iy) column = column + {element};
                sum = sum + column;
            }}"""
    else:
        reduction = f"""for (int32_t iy = y0; iy < y1; ++iy)
                for (int32_t ix = x0; ix < x1; ++ix) sum = sum + {element};"""
    divisor = f"{float(win.kh * win.kw)!r}f" if include_pad else "(float)((y1 - y0) * (x1 - x0))"
    return f"""{{
{table.declaration()}
for (int32_t p = 0; p < {win.n * win.c}; ++p) {{
    for (int32_t oy = 0; oy < {win.oh}; ++oy) {{
        const int32_t top = oy * {win.stride_h} - {win.pad_top};
        const int32_t y0 = top < 0 ? 0 : top, y1 = top + {win.kh} > {win.h} ? {win.h} : top + {win.kh};
        for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
            const int32_t left = ox * {win.stride_w} - {win.pad_left};
            const int32_t x0 = left < 0 ? 0 : left, x1 = left + {win.kw} > {win.w} ? {win.w} : left + {win.kw};
            float sum = 0.0f;
            {reduction}
            const float mean = sum / {divisor};
            {quantiser.store(f"{y}[(p * {win.oh} + oy) * {win.ow} + ox]", "mean")}
        }}
    }}
}}
}}"""


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAveragePool": single_binding(QLinearAveragePoolFloat32Parser(), any_types(5),
                                                       "QLinearAveragePool float32", EXACT_TEMPLATE),
    "com.microsoft.QLinearGlobalAveragePool": single_binding(QLinearAveragePoolFloat32Parser(), any_types(5),
                                                             "QLinearGlobalAveragePool float32", EXACT_TEMPLATE),
}
