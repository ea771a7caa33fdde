"""Fast integer convolution kernels (8/16-bit data): dense im2col by output row, pointwise, depthwise.

The plain loop nest (one MAC per innermost iteration, the padding tested in
the ky/kx loops, the NCHW index recomputed for every MAC) neither vectorises
nor keeps its operands in registers.  These kernels instead copy the rows a
window reads into a zero-padded int16 *line buffer* (so every inner loop is
branch-free with constant trip counts) and then:

* dense (any group size, stride, dilation, padding): gather each output
  pixel's window of one output row into an int16 im2col row and take its dot
  product with every output channel's weights (:mod:`._dot_block`); the
  gather is paid once per row for all output channels of the group;
* pointwise (1×1, stride 1, no padding): transpose a block of pixels into
  int16 rows, the same dot products, no line buffer;
* depthwise (one input and one output channel per group): the window slides
  over the line buffer directly, vectorised along the output row; with stride
  1, over a band of padded rows flattened into one vector
  (:func:`depthwise_flat`), which small maps need.

Dense and pointwise take two output channels at a time (:func:`_channel_pairs`:
each int16 row loaded serves both weight rows), and 8-bit weight rows are
widened to int16 before their dot products (:func:`widens_weights`).

Scratch is bounded: the line buffer holds ``kh`` padded rows of one group and
the im2col buffer one output row (pointwise: a block of at most
:data:`POINTWISE_BLOCK_BYTES`; stride-1 depthwise: a band of at most
:data:`DEPTHWISE_BAND_BYTES`), plus two widened weight rows; the template asks
the arena for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from deeploy_core.plugin_api import Buffer
from deeploy_generic_c.kernels.dot_block import dot_rows, dot_rows_pair, indent
from deeploy_generic_c.parsing.window import Window

POINTWISE_BLOCK_BYTES = 4096
"""Upper bound of the pointwise kernel's transposed pixel block (int16), unless one group of four pixels needs more."""

NARROW_DATA = ("int8_t", "uint8_t", "int16_t")
"""Element types whose values fit the int16 rows the kernels gather into."""

BYTE_WEIGHTS = ("int8_t", "uint8_t")
"""Weight types whose reduction loops gcc vectorises sixteen lanes wide (see :func:`widens_weights`)."""

ChannelStore = Callable[[str, str, str], str]
"""``store(target, acc, channel)``: C statements writing requantised/cast ``acc`` of output ``channel`` to ``target``."""


@dataclass(frozen=True)
class ConvOperands:
    """What the kernels read and write: C names and types, window and group, bias and epilogue."""

    x: Buffer
    w: Buffer
    y: Buffer
    win: Window
    group: int
    bias: Callable[[str], str]
    """C expression of the int32 bias of output channel ``mo`` (``"0"`` without bias)."""
    store: ChannelStore
    x_zero: int = 0
    """Subtracted from every input sample as it is copied (QLinearConv's input zero point); padding stays 0."""

    @property
    def cg(self) -> int:
        return self.win.c // self.group

    @property
    def mg(self) -> int:
        return self.win.m // self.group

    @property
    def k(self) -> int:
        return self.cg * self.win.kh * self.win.kw

    @property
    def line_width(self) -> int:
        """Columns of a padded line: the left pad, the row, and whatever right pad the windows reach."""
        win = self.win
        reach = (win.ow - 1) * win.stride_w + (win.kw - 1) * win.dil_w + 1
        return max(win.pad_left + win.w, reach)


def applies(x: Buffer, w: Buffer, for_tiles: bool) -> bool:
    """Whether the fast kernels take these operands: 8/16-bit data and weights (wider ones overflow int16 rows),
    in an untiled build.

    Tiled, the line buffer and im2col row (they scale with the input channels, not the tile) would be paid once
    per core in L1 for every tile: small-L1 configurations (KeywordSpotting on the cluster at L1 16 KiB) became
    infeasible.  Tiles keep the plain loop until the scratch shrinks with the tile's channels.
    """
    return not for_tiles and x.dtype.c_type in NARROW_DATA and w.dtype.c_type in NARROW_DATA


def accumulator_bound(x: Buffer, w: Buffer, bias: Buffer | None, channels: int) -> int | None:
    """A bound on ``|acc|`` of any output (constant weights: the largest row sum of |w| times max |x|, plus |bias|)."""
    if w.values is None:
        return None
    x_info = np.iinfo(x.dtype.numpy)
    x_max = max(abs(int(x_info.min)), abs(int(x_info.max)))
    rows = np.abs(np.asarray(w.values, dtype=np.int64)).reshape(channels, -1).sum(axis=1)
    bound = int(rows.max()) * x_max if rows.size else 0
    if bias is not None:
        if bias.values is None:
            return None
        bound += int(np.max(np.abs(np.asarray(bias.values, dtype=np.int64)))) if bias.numel else 0
    return bound


def widens_weights(ops: ConvOperands) -> bool:
    """Whether each weight row is widened into int16 scratch before its dot products (8-bit weights, ``k >= 8``).

    With 8-bit weights the reduction mixes int8 and int16 operands, and gcc
    ``-O2`` sizes its vectors by the narrowest type: sixteen lanes.  A
    reduction whose length is not a multiple of sixteen (DS-CNN's first conv,
    ``1·10·4 = 40``; ResNet-8's, ``3·3·3 = 27``) would need an epilogue,
    which gcc's very-cheap cost model refuses, so the whole loop ran scalar
    (DS-CNN's first conv took 30% of the network); and where it did
    vectorise, every iteration sign-extended the weights again and each
    accumulator spanned several registers.  Widened rows make every operand
    int16: eight lanes (``pmaddwd``), which any multiple of eight fills, and
    the products are the same integers.  The copy costs ``k`` per weight row
    against ``k`` times the rows it multiplies (ResNet-8 5% faster, DS-CNN's
    first conv 3x).
    """
    return ops.w.dtype.c_type in BYTE_WEIGHTS and ops.k >= 8


def _weight_row(ops: ConvOperands, offset: str, channel: str = "mo", suffix: str = "") -> tuple[str, str]:
    """(C declaring ``dc_w<suffix>``, the weights of output channel ``channel``; the name the dot products read).

    ``offset`` is where the widened row lives in ``dc_scratch`` (see :func:`widens_weights`).
    """
    wt, k = ops.w.dtype.c_type, ops.k
    source = f"{ops.w.c_name} + {channel} * {k}"
    if not widens_weights(ops):
        return f"const {wt} *const dc_w{suffix} = {source};", f"dc_w{suffix}"
    return (f"const {wt} *restrict const dc_w{suffix} = {source};\n"
            f"int16_t *restrict const dc_wrow{suffix} = dc_scratch + {offset};\n"
            f"for (int32_t kk = 0; kk < {k}; ++kk) dc_wrow{suffix}[kk] = (int16_t)dc_w{suffix}[kk];"), f"dc_wrow{suffix}"


def _channel_pairs(ops: ConvOperands, offset: int, out: Callable[[str], str], count: str) -> str:
    """C: the dot products of every output channel of group ``g``, two channels at a time, then an odd last one.

    ``out(channel)`` is the C address of the channel's first output of these
    rows; ``offset`` is where the widened weight rows start in the scratch.
    """
    k, mg = ops.k, ops.mg
    yt = ops.y.dtype.c_type

    def stores(name: str, channel: str) -> Callable[[str, str], str]:
        return lambda acc, row: ops.store(f"{name}[{row}]", acc, channel)

    row0, w0 = _weight_row(ops, str(offset), "mo", "")
    row1, w1 = _weight_row(ops, str(offset + k), "(mo + 1)", "1")
    pair = dot_rows_pair(count, k, "dc_col", (w0, w1), (ops.bias("mo"), ops.bias("(mo + 1)")),
                         (stores("dc_out", "mo"), stores("dc_out1", "(mo + 1)")))
    code = f"""for (int32_t mg = 0; mg + 2 <= {mg}; mg += 2) {{
    const int32_t mo = g * {mg} + mg;
{indent(row0, 4)}
{indent(row1, 4)}
    {yt} *const dc_out = {out("mo")};
    {yt} *const dc_out1 = {out("(mo + 1)")};
{indent(pair, 4)}
}}"""
    if mg % 2:
        single = dot_rows(count, k, "dc_col", w0, ops.bias("mo"), stores("dc_out", "mo"))
        code += f"""
{{
    const int32_t mo = g * {mg} + {mg - 1};
{indent(row0, 4)}
    {yt} *const dc_out = {out("mo")};
{indent(single, 4)}
}}"""
    return code


def kind(ops: ConvOperands) -> str:
    """``depthwise``, ``pointwise`` or ``dense``: the kernel a convolution gets."""
    win = ops.win
    if ops.cg == 1 and ops.mg == 1:
        return "depthwise"
    if (win.kh == win.kw == 1 and win.stride_h == win.stride_w == 1 and not any(win.pads)
            and win.oh == win.h and win.ow == win.w):
        return "pointwise"
    return "dense"


def pointwise_block(ops: ConvOperands) -> int:
    """Pixels per transposed block: all of them when they fit the budget, else a multiple of four that does."""
    pixels = ops.win.oh * ops.win.ow
    fit = max(4, (POINTWISE_BLOCK_BYTES // (2 * ops.cg)) // 4 * 4)
    return min(pixels, fit)


def scratch_bytes(ops: ConvOperands) -> int:
    """Bytes of int16 scratch the kernel uses (line buffer and/or im2col rows)."""
    win = ops.win
    which = kind(ops)
    row = 2 * ops.k if widens_weights(ops) else 0
    if which == "pointwise":
        return 2 * (pointwise_block(ops) * ops.cg + row)
    if which == "depthwise":
        band = depthwise_band(ops)
        return band.scratch if band is not None else 2 * win.kh * ops.line_width
    return 2 * (ops.cg * win.kh * ops.line_width + win.ow * ops.k + row)


def _fill_lines(ops: ConvOperands, channels: int, source: str, row: str = "dc_oy") -> str:
    """C: the ``kh`` input rows output row ``row`` reads, of ``channels`` channels from ``source``, into ``dc_lines``.

    Rows above or below the input and the columns of the padding are zero;
    ``dc_lines[(ci*kh + ky)*line_width + j]`` holds input column ``j - pad_left``.
    """
    win, width = ops.win, ops.line_width
    right = width - win.pad_left - win.w
    xt = ops.x.dtype.c_type
    sample = f"(int16_t)(dc_src[j] - {ops.x_zero})" if ops.x_zero else "(int16_t)dc_src[j]"
    zero_left = f"for (int32_t j = 0; j < {win.pad_left}; ++j) {{ dc_line[j] = 0; }}\n            " if win.pad_left else ""
    zero_right = (f"\n            for (int32_t j = 0; j < {right}; ++j) {{ dc_line[{win.pad_left + win.w} + j] = 0; }}"
                  if right else "")
    return f"""for (int32_t ci = 0; ci < {channels}; ++ci) {{
    for (int32_t ky = 0; ky < {win.kh}; ++ky) {{
        const int32_t iy = {row} * {win.stride_h} - {win.pad_top} + ky * {win.dil_h};
        int16_t *const dc_line = dc_lines + (ci * {win.kh} + ky) * {width};
        if (iy < 0 || iy >= {win.h}) {{
            for (int32_t j = 0; j < {width}; ++j) dc_line[j] = 0;
        }} else {{
            const {xt} *const dc_src = {source} + (ci * {win.h} + iy) * {win.w};
            {zero_left}for (int32_t j = 0; j < {win.w}; ++j) {{ dc_line[{win.pad_left} + j] = {sample}; }}{zero_right}
        }}
    }}
}}"""


def dense(ops: ConvOperands) -> str:
    """Line buffer and im2col rows per output row, then dot products for every output channel of the group."""
    win, width, k, cg, mg = ops.win, ops.line_width, ops.k, ops.cg, ops.mg
    xt, yt = ops.x.dtype.c_type, ops.y.dtype.c_type

    channels = _channel_pairs(ops, cg * win.kh * width + win.ow * k,
                              lambda mo: f"{ops.y.c_name} + ((b * {win.m} + {mo}) * {win.oh} + dc_oy) * {win.ow}",
                              str(win.ow))
    # A short window row is copied as straight-line code: the loop's own counting cost as much as the copies.
    gather = (" ".join(f"dc_dst[r * {win.kw} + {kx}] = dc_at[r * {width} + {kx * win.dil_w}];" for kx in range(win.kw))
              if win.kw <= 8 else
              f"for (int32_t kx = 0; kx < {win.kw}; ++kx) dc_dst[r * {win.kw} + kx] = dc_at[r * {width} + kx * {win.dil_w}];")
    return f"""int16_t *const dc_lines = dc_scratch;
int16_t *const dc_col = dc_scratch + {cg * win.kh * width};
for (int32_t b = 0; b < {win.n}; ++b) {{
    for (int32_t g = 0; g < {ops.group}; ++g) {{
        const {xt} *const dc_x = {ops.x.c_name} + (b * {win.c} + g * {cg}) * {win.h * win.w};
        for (int32_t dc_oy = 0; dc_oy < {win.oh}; ++dc_oy) {{
{indent(_fill_lines(ops, cg, "dc_x"), 12)}
            for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
                int16_t *const dc_dst = dc_col + ox * {k};
                const int16_t *const dc_at = dc_lines + ox * {win.stride_w};
                for (int32_t r = 0; r < {cg * win.kh}; ++r) {{
                    {gather}
                }}
            }}
{indent(channels, 12)}
        }}
    }}
}}"""


def pointwise(ops: ConvOperands) -> str:
    """Blocks of pixels transposed to int16 rows of channels, then dot products with every output channel."""
    win, cg, mg = ops.win, ops.cg, ops.mg
    pixels, block = win.oh * win.ow, pointwise_block(ops)
    xt, yt = ops.x.dtype.c_type, ops.y.dtype.c_type

    channels = _channel_pairs(ops, block * cg, lambda mo: f"{ops.y.c_name} + (b * {win.m} + {mo}) * {pixels} + p0",
                              "dc_count")
    sample = f"(int16_t)(dc_src[p] - {ops.x_zero})" if ops.x_zero else "(int16_t)dc_src[p]"
    return f"""int16_t *const dc_col = dc_scratch;
for (int32_t b = 0; b < {win.n}; ++b) {{
    for (int32_t g = 0; g < {ops.group}; ++g) {{
        const {xt} *const dc_x = {ops.x.c_name} + (b * {win.c} + g * {cg}) * {pixels};
        for (int32_t p0 = 0; p0 < {pixels}; p0 += {block}) {{
            const int32_t dc_count = {pixels} - p0 < {block} ? {pixels} - p0 : {block};
            for (int32_t ci = 0; ci < {cg}; ++ci) {{
                const {xt} *const dc_src = dc_x + ci * {pixels} + p0;
                for (int32_t p = 0; p < dc_count; ++p) dc_col[p * {cg} + ci] = {sample};
            }}
{indent(channels, 12)}
        }}
    }}
}}"""


DEPTHWISE_BAND_BYTES = 4096
"""Scratch budget of :func:`depthwise_band`'s padded rows (int16) and flat accumulators (int32)."""

FLAT_LANES = 8
"""The flat accumulator count is a multiple of this: int16 data gets eight lanes, and gcc ``-O2`` refuses
loops that would need an epilogue."""


@dataclass(frozen=True)
class DepthwiseBand:
    """The shape of :func:`depthwise_flat`: ``rows`` output rows per band, computed as ``count`` flat outputs."""

    rows: int
    """Output rows per band."""
    input_rows: int
    """Padded input rows a band reads."""
    count: int
    """Flat outputs computed per band: ``rows * line_width`` rounded up to :data:`FLAT_LANES`."""
    plane: int
    """int16 entries of the padded rows, with the zero slack the last flat outputs read (multiple of 8)."""

    @property
    def scratch(self) -> int:
        return 2 * self.plane + 4 * self.count


def _band(ops: ConvOperands, rows: int) -> DepthwiseBand:
    win, width = ops.win, ops.line_width
    input_rows = rows + (win.kh - 1) * win.dil_h
    count = -(-rows * width // FLAT_LANES) * FLAT_LANES
    reach = count + (win.kh - 1) * win.dil_h * width + (win.kw - 1) * win.dil_w
    plane = -(-max(input_rows * width, reach) // 8) * 8
    return DepthwiseBand(rows, input_rows, count, plane)


def depthwise_band(ops: ConvOperands) -> DepthwiseBand | None:
    """The band of :func:`depthwise_flat` for a stride-1 depthwise conv of at most 16 taps (None: not that kind).

    As many output rows as fit :data:`DEPTHWISE_BAND_BYTES` (at least one).
    """
    win = ops.win
    if win.stride_h != 1 or win.stride_w != 1 or win.kh * win.kw > 16:
        return None
    rows = 1
    while rows < win.oh and _band(ops, rows + 1).scratch <= DEPTHWISE_BAND_BYTES:
        rows += 1
    return _band(ops, rows)


def depthwise_flat(ops: ConvOperands, band: DepthwiseBand) -> str:
    """Stride-1 depthwise: a band of padded input rows, every tap slid over the band as one flat vector.

    The row-by-row kernel vectorises along the output row, which small maps
    (DS-CNN's 25x5, MobileNet's 6x6 and 3x3) leave too short: it ran scalar.
    With stride 1, output ``(r, ox)`` of a band reads padded sample
    ``r * width + ox + offset(tap)``, so the flat index ``q = r * width + ox``
    turns the band into one loop of ``count`` outputs (a multiple of eight:
    constant, no epilogue) whose terms are int16 samples times int16 weights,
    the shape gcc and clang vectorise eight lanes wide.  The flat outputs
    whose ``ox`` lies past the row are computed and dropped; the zero slack
    after the rows keeps their reads inside the scratch.  The sums are the
    same integers, in the same order, as the row kernel's.
    """
    win, width = ops.win, ops.line_width
    xt, wt, yt = ops.x.dtype.c_type, ops.w.dtype.c_type, ops.y.dtype.c_type
    taps = [(ky, kx) for ky in range(win.kh) for kx in range(win.kw)]
    weights = "\n".join(f"const int16_t dc_w{t} = (int16_t)dc_w[{t}];" for t in range(len(taps)))
    terms = " + ".join(f"(int32_t)dc_w{t} * (int32_t)dc_plane[q + {ky * win.dil_h * width + kx * win.dil_w}]"
                       for t, (ky, kx) in enumerate(taps))
    sample = f"(int16_t)(dc_src[j] - {ops.x_zero})" if ops.x_zero else "(int16_t)dc_src[j]"
    right = width - win.pad_left - win.w
    zero_left = f"for (int32_t j = 0; j < {win.pad_left}; ++j) dc_line[j] = 0;\n" if win.pad_left else ""
    zero_right = f"\nfor (int32_t j = 0; j < {right}; ++j) dc_line[{win.pad_left + win.w} + j] = 0;" if right else ""
    slack = band.plane - band.input_rows * width
    fill = f"""for (int32_t r = 0; r < {band.input_rows}; ++r) {{
    const int32_t iy = dc_oy + r - {win.pad_top};
    int16_t *const dc_line = dc_plane + r * {width};
    if (iy < 0 || iy >= {win.h}) {{
        for (int32_t j = 0; j < {width}; ++j) dc_line[j] = 0;
    }} else {{
        const {xt} *const dc_src = dc_x + iy * {win.w};
{indent(zero_left + f"for (int32_t j = 0; j < {win.w}; ++j) dc_line[{win.pad_left} + j] = {sample};" + zero_right, 8)}
    }}
}}"""
    return f"""int16_t *const dc_plane = dc_scratch;
int32_t *const dc_flat = (int32_t *)(void *)(dc_scratch + {band.plane});
for (int32_t j = 0; j < {slack}; ++j) dc_plane[{band.input_rows * width} + j] = 0;
for (int32_t b = 0; b < {win.n}; ++b) {{
    for (int32_t mo = 0; mo < {win.m}; ++mo) {{
        const {xt} *const dc_x = {ops.x.c_name} + (b * {win.c} + mo) * {win.h * win.w};
        const {wt} *const dc_w = {ops.w.c_name} + mo * {len(taps)};
{indent(weights, 8)}
        const int32_t dc_bias = {ops.bias("mo")};
        for (int32_t dc_oy = 0; dc_oy < {win.oh}; dc_oy += {band.rows}) {{
{indent(fill, 12)}
            for (int32_t q = 0; q < {band.count}; ++q) dc_flat[q] = dc_bias + {terms};
            const int32_t dc_rows = {win.oh} - dc_oy < {band.rows} ? {win.oh} - dc_oy : {band.rows};
            for (int32_t r = 0; r < dc_rows; ++r) {{
                {yt} *const dc_out = {ops.y.c_name} + ((b * {win.m} + mo) * {win.oh} + dc_oy + r) * {win.ow};
                const int32_t *const dc_acc = dc_flat + r * {width};
                for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
                    {ops.store("dc_out[ox]", "dc_acc[ox]", "mo")}
                }}
            }}
        }}
    }}
}}"""


def depthwise(ops: ConvOperands) -> str:
    """Per channel and output row: the padded lines, then the window slid along the row (no gather)."""
    band = depthwise_band(ops)
    if band is not None:
        return depthwise_flat(ops, band)
    win, width = ops.win, ops.line_width
    taps = win.kh * win.kw
    xt, wt, yt = ops.x.dtype.c_type, ops.w.dtype.c_type, ops.y.dtype.c_type
    terms = " + ".join(
        f"dc_wv[{ky * win.kw + kx}] * (int32_t)dc_lines[{ky * width + kx * win.dil_w} + ox * {win.stride_w}]"
        for ky in range(win.kh) for kx in range(win.kw)
    ) if taps <= 16 else None
    if terms is None:
        body = (f"int32_t acc = dc_bias;\n"
                f"for (int32_t t = 0; t < {taps}; ++t) acc += dc_wv[t] * (int32_t)dc_lines[(t / {win.kw}) * {width} "
                f"+ (t % {win.kw}) * {win.dil_w} + ox * {win.stride_w}];")
    else:
        body = f"const int32_t acc = dc_bias + {terms};"
    return f"""int16_t *const dc_lines = dc_scratch;
for (int32_t b = 0; b < {win.n}; ++b) {{
    for (int32_t mo = 0; mo < {win.m}; ++mo) {{
        const {xt} *const dc_x = {ops.x.c_name} + (b * {win.c} + mo) * {win.h * win.w};
        const {wt} *const dc_w = {ops.w.c_name} + mo * {taps};
        int32_t dc_wv[{taps}];
        for (int32_t t = 0; t < {taps}; ++t) dc_wv[t] = (int32_t)dc_w[t];
        const int32_t dc_bias = {ops.bias("mo")};
        for (int32_t dc_oy = 0; dc_oy < {win.oh}; ++dc_oy) {{
{indent(_fill_lines(ops, 1, "dc_x"), 12)}
            {yt} *const dc_out = {ops.y.c_name} + ((b * {win.m} + mo) * {win.oh} + dc_oy) * {win.ow};
            for (int32_t ox = 0; ox < {win.ow}; ++ox) {{
{indent(body, 16)}
                {ops.store("dc_out[ox]", "acc", "mo")}
            }}
        }}
    }}
}}"""


def kernel(ops: ConvOperands) -> str:
    """The C body of the fast kernel for ``ops`` (expects ``int16_t *dc_scratch`` of :func:`scratch_bytes`)."""
    return {"dense": dense, "pointwise": pointwise, "depthwise": depthwise}[kind(ops)](ops)

