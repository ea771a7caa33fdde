"""Float convolution written into the layer as a direct loop (no im2col, no scratch).

Why: im2col pays for itself when the GEMM after it reuses each gathered column
over many output channels.  With few output channels per group (the peer
kernels' 2-4, CCT's first conv's 8) the gather (rows of 7 columns at stride 4 in
the peer tests) costs more than the products, and with clang the im2col path
ran at 0.68-0.92x of the old direct loop.  Here every output position keeps one
accumulator per output channel of its group (``acc0 .. acc{Mg-1}``, scalars written
out: gcc -O2 kept an ``acc[Mg]`` array in memory across the channel loop and
ran the peer tests' regular conv 2.3x slower than this): each
input sample is loaded once and multiplied into all of them, so the ``Mg``
multiply-add chains are independent and the loop is bound by the weight loads,
not by the latency of one running sum.

Every shape is a constant of the layer: the columns whose taps all fall inside
the input (``ow_lo <= ow < ow_hi``, worked out here) run the kernel's full width
with a constant trip count and no bound test; only the border columns compute
their tap range, and the rows clip their tap range once per row.  The code is
self-contained, so a network whose convolutions all take this path links none
of runtime/src/conv.c and, unless something else needs it, none of the blocked
GEMM (about 7 KB of x86-64 code between them).

Rounding: each output sums ``c, kh, kw`` in increasing order from zero and adds
the bias last, as the im2col path's GEMM does for every element; the two paths
agree to float rounding of the same sum (peer tolerance 1e-4), not bit for bit
with ONNX Runtime, whose order differs anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECT_CONV_MAX_FILTERS = 8
"""Output channels per group up to which a float conv is a direct loop: that many accumulators fit in registers
(x86-64 SSE has 16, ARMv7-M's FPU 32 single-precision ones) and the im2col gather cannot be amortised over them."""


@dataclass(frozen=True)
class DirectConv:
    """One float Conv layer's shapes and buffers (C names), 1-D as ``H = KH = 1``."""

    x: str
    w: str
    bias: str | None
    y: str
    n: int
    c: int
    h: int
    wd: int
    m: int
    kh: int
    kw: int
    oh: int
    ow: int
    stride_h: int
    stride_w: int
    pad_top: int
    pad_left: int
    dil_h: int
    dil_w: int
    group: int


def takes_direct_path(m: int, group: int) -> bool:
    """Whether a float conv with ``m`` output channels in ``group`` groups is written as a direct loop."""
    return m // group <= DIRECT_CONV_MAX_FILTERS


def interior_columns(conv: DirectConv) -> tuple[int, int]:
    """``(ow_lo, ow_hi)``: the output columns whose ``kw`` taps all read inside the input row (may be empty)."""
    lo = -(-conv.pad_left // conv.stride_w)  # first ow with ow * stride - pad_left >= 0
    last_start = conv.wd - 1 + conv.pad_left - (conv.kw - 1) * conv.dil_w  # ow * stride must not exceed this
    hi = last_start // conv.stride_w + 1 if last_start >= 0 else 0
    lo, hi = min(lo, conv.ow), min(hi, conv.ow)
    return lo, max(lo, hi)


def _taps(conv: DirectConv, first: str, last: str, indent: str, mg: int, patch: int) -> list[str]:
    """The ``c, kh, kw`` loops adding into ``acc`` with ``kw`` from ``first`` to ``last`` (C expressions)."""
    kw_loop = (f"for (int32_t kx = 0; kx < {conv.kw}; ++kx)" if (first, last) == ("0", str(conv.kw))
               else f"for (int32_t kx = {first}; kx < {last}; ++kx)")
    sample = "xr[kx]" if conv.dil_w == 1 else f"xr[kx * {conv.dil_w}]"
    return [
        f"{indent}for (int32_t ci = 0; ci < {conv.c // conv.group}; ++ci) {{",
        f"{indent}    for (int32_t ky = ky_lo; ky < ky_hi; ++ky) {{",
        f"{indent}        const float *xr = xg + (ci * {conv.h} + iy0 + ky * {conv.dil_h}) * {conv.wd} + ix0;",
        f"{indent}        const float *wr = wg + (ci * {conv.kh} + ky) * {conv.kw};",
        f"{indent}        {kw_loop} {{",
        f"{indent}            const float v = {sample};",
        *(f"{indent}            acc{t} += v * wr[{t * patch} + kx];" for t in range(mg)),
        f"{indent}        }}",
        f"{indent}    }}",
        f"{indent}}}",
    ]


def direct_conv(conv: DirectConv) -> str:
    """C statements computing the layer (one block; locals do not leak into RunNetwork)."""
    cg, mg = conv.c // conv.group, conv.m // conv.group
    patch = cg * conv.kh * conv.kw
    ow_lo, ow_hi = interior_columns(conv)
    lines = ["{"]
    outer = []
    if conv.n > 1:
        outer.append(("b", conv.n))
    if conv.group > 1:
        outer.append(("g", conv.group))
    for depth, (name, count) in enumerate(outer):
        lines.append("    " * (depth + 1) + f"for (int32_t {name} = 0; {name} < {count}; ++{name}) {{")
    ind = "    " * (len(outer) + 1)
    image = " + ".join(term for term, used in (("b * " + str(conv.c), conv.n > 1), (f"g * {cg}", conv.group > 1))
                       if used) or "0"
    out_image = " + ".join(term for term, used in (("b * " + str(conv.m), conv.n > 1), (f"g * {mg}", conv.group > 1))
                           if used) or "0"
    plane, out_plane = conv.h * conv.wd, conv.oh * conv.ow
    lines += [
        f"{ind}const float *const xg = {conv.x}" + ("" if image == "0" else f" + ({image}) * {plane}") + ";",
        f"{ind}const float *const wg = {conv.w}" + (f" + g * {mg * patch}" if conv.group > 1 else "") + ";",
        f"{ind}float *const yg = {conv.y}" + ("" if out_image == "0" else f" + ({out_image}) * {out_plane}") + ";",
        f"{ind}for (int32_t oy = 0; oy < {conv.oh}; ++oy) {{",
        f"{ind}    const int32_t iy0 = oy * {conv.stride_h} - {conv.pad_top};",
        f"{ind}    const int32_t ky_lo = iy0 < 0 ? (-iy0 + {conv.dil_h - 1}) / {conv.dil_h} : 0;",
        f"{ind}    const int32_t ky_end = ({conv.h} - iy0 + {conv.dil_h - 1}) / {conv.dil_h};",
        f"{ind}    const int32_t ky_hi = ky_end < {conv.kh} ? ky_end : {conv.kh};",
        f"{ind}    for (int32_t ox = 0; ox < {conv.ow}; ++ox) {{",
        f"{ind}        const int32_t ix0 = ox * {conv.stride_w} - {conv.pad_left};",
        f"{ind}        float " + ", ".join(f"acc{t} = 0.0f" for t in range(mg)) + ";",
    ]
    inner = ind + "        "
    border = _taps(conv, "kx_lo", "kx_hi", inner + "    ", mg, patch)
    border_head = [
        f"{inner}    const int32_t kx_lo = ix0 < 0 ? (-ix0 + {conv.dil_w - 1}) / {conv.dil_w} : 0;",
        f"{inner}    const int32_t kx_end = ({conv.wd} - ix0 + {conv.dil_w - 1}) / {conv.dil_w};",
        f"{inner}    const int32_t kx_hi = kx_end < {conv.kw} ? kx_end : {conv.kw};",
    ]
    if (ow_lo, ow_hi) == (0, conv.ow):
        lines += _taps(conv, "0", str(conv.kw), inner, mg, patch)
    elif ow_lo == ow_hi:
        lines += [f"{inner}{{"] + border_head + border + [f"{inner}}}"]
    else:
        lines += [f"{inner}if (ox >= {ow_lo} && ox < {ow_hi}) {{"]
        lines += _taps(conv, "0", str(conv.kw), inner + "    ", mg, patch)
        lines += [f"{inner}}} else {{"] + border_head + border + [f"{inner}}}"]
    for t in range(mg):
        channel = f"g * {mg} + {t}" if conv.group > 1 else str(t)
        store = f"acc{t}" if conv.bias is None else f"acc{t} + {conv.bias}[{channel}]"
        lines.append(f"{inner}yg[{t * conv.oh * conv.ow} + oy * {conv.ow} + ox] = {store};")
    lines += [
        f"{ind}    }}",
        f"{ind}}}",
    ]
    for depth in range(len(outer), 0, -1):
        lines.append("    " * depth + "}")
    lines.append("}")
    return "\n".join(lines)
