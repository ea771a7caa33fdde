"""QLinearConv's loops: output blocks that compilers vectorise, window bounds computed once per output.

The accumulator of every output is the exact integer ``Σ (x - zx)(w - zw)``
over the taps inside the input (padding contributes nothing), so any order
and grouping of the sum gives the same int32, and the requantisation after it
is unchanged: every path below is bit-exact with the plain loop.

* **Blocks.** Along an output row, outputs whose windows lie wholly inside the
  input are computed :data:`BLOCKS` at a time: for each tap, one weight times
  a run of inputs added to a small accumulator array, a fixed-length loop gcc
  and clang vectorise.  A 1x1 convolution with unit strides and no padding
  (pointwise layers) is one long row over the flattened plane.
* **Input zero point.** With constant weights, a whole window sums
  ``x · (w - zw)`` and subtracts ``zx · Σ (w - zw)`` (a per-channel constant
  computed here) once; windows cut by the padding subtract ``zx`` per tap.
* **Bounds.** A border output computes its valid tap range once instead of
  testing every tap; weight zero points that are all 0 (symmetric weights, as
  TFLite and most exporters write them) are left out of the code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from deeploy_core.plugin_api import Buffer
from deeploy_generic_c.parsing.window import Window

BLOCKS = (16, 8, 4, 2)
"""Block lengths tried, longest first: the longest that fits the row's interior outputs."""


def _table(name: str, values: np.ndarray) -> str:
    return f"static const int32_t {name}[{values.size}] = {{{', '.join(str(int(v)) for v in values)}}};"


def flattened(win: Window) -> Window:
    """A pointwise window (1x1, unit strides and dilations, no padding) as one row over the whole plane."""
    if (win.kh, win.kw, win.stride_h, win.stride_w) == (1, 1, 1, 1) and not any(win.pads):
        return replace(win, h=1, w=win.h * win.w, oh=1, ow=win.oh * win.ow)
    return win


def conv_loops(win: Window, cg: int, mg: int, x: Buffer, w: Buffer, w_zero: np.ndarray, zx: int, bias: str,
               store: Callable[[str], str]) -> str:
    """C loops of a grouped 2-D convolution; ``store(ox)`` requantises ``acc`` into output ``(oy, ox)``.

    The output index must be ``((b · M + mo) · OH + oy) · OW + ox`` of the real
    window: for a flattened pointwise window (``oy`` = 0, ``ox`` running over
    the plane) it names the same element.
    """
    win = flattened(win)
    weights = w.values
    symmetric = not np.any(w_zero)
    wz = "0" if symmetric else ("w_zero[mo]" if w_zero.size > 1 else "w_zero[0]")
    tap = "(int32_t)wr[kx]" if symmetric else "((int32_t)wr[kx] - wz)"
    whole = weights is not None and np.asarray(weights).size == win.m * cg * win.kh * win.kw and zx != 0
    tables = "" if symmetric else _table("w_zero", w_zero) + "\n"
    correction = ""
    if whole:
        taps = np.asarray(weights, np.int64).reshape(win.m, -1) - w_zero.reshape(-1, 1).astype(np.int64)
        tables += _table("w_sum", taps.sum(axis=1)) + "\n"
        correction = f" - {zx} * w_sum[mo]"
    output = store
    def per_tap(operand: str) -> str:
        return f"""for (int32_t ci = 0; ci < {cg}; ++ci) {{
                    const <XT> *xc = xg + ci * {win.h * win.w};
                    const <WT> *wc = wm + ci * {win.kh * win.kw};
                    for (int32_t ky = ky0; ky < ky1; ++ky) {{
                        const <XT> *xr = xc + (top + ky * {win.dil_h}) * {win.w};
                        const <WT> *wr = wc + ky * {win.kw};
                        for (int32_t kx = kx0; kx < kx1; ++kx) acc += {operand} * {tap};
                    }}
                }}"""

    x_tap = f"xr[left + kx * {win.dil_w}]" if win.dil_w != 1 else "xr[left + kx]"
    cut = per_tap(f"((int32_t){x_tap} - {zx})")
    if whole:
        single = f"""if (ky0 == 0 && ky1 == {win.kh} && kx0 == 0 && kx1 == {win.kw}) {{
                    {per_tap(f"(int32_t){x_tap}")}
                    acc = acc{correction};
                }} else {{
                    {cut}
                }}"""
    else:
        single = cut
    per_output = f"""for (; ox < OX_END; ++ox) {{
                const int32_t left = ox * {win.stride_w} - {win.pad_left};
                const int32_t kx0 = left < 0 ? (-left + {win.dil_w - 1}) / {win.dil_w} : 0;
                const int32_t kx_end = left > {win.w - 1} ? 0 : ({win.w - 1} - left) / {win.dil_w} + 1;
                const int32_t kx1 = kx_end < {win.kw} ? kx_end : {win.kw};
                int32_t acc = {bias};
                {single}
                {output("ox")}
            }}"""
    first = -(-win.pad_left // win.stride_w)  # first output whose window starts inside the row
    last = min(win.ow, (win.w - 1 - (win.kw - 1) * win.dil_w + win.pad_left) // win.stride_w + 1)
    sizes = [size for size in BLOCKS if last - first >= size]
    rows = per_output.replace("OX_END", str(win.ow))
    if sizes:
        # Rows whose windows are cut at the top or bottom take the blocks too, subtracting zx per tap.
        cut_operand = f"((int32_t)xs[j * {win.stride_w}] - {zx})"
        cut_blocks = "".join(_block(win, cg, size, last, tap, cut_operand, bias, "", output("ox + j"))
                             for size in sizes)
        if whole:
            operand = f"(int32_t)xs[j * {win.stride_w}]"
            whole_blocks = "".join(_block(win, cg, size, last, tap, operand, bias, correction, output("ox + j"))
                                   for size in sizes)
            blocked = f"""if (ky0 == 0 && ky1 == {win.kh}) {{
                {whole_blocks}
            }} else {{
                {cut_blocks}
            }}"""
        else:
            blocked = cut_blocks
        rows = per_output.replace("OX_END", str(first)) + "\n            " + blocked + "\n            " + rows
    return f"""{tables}for (int32_t b = 0; b < {win.n}; ++b) {{
    for (int32_t mo = 0; mo < {win.m}; ++mo) {{
        const int32_t wz = {wz};
        const <XT> *const xg = &{x.c_name}[(b * {win.c} + (mo / {mg}) * {cg}) * {win.h * win.w}];
        const <WT> *const wm = &{w.c_name}[mo * {cg * win.kh * win.kw}];
        (void)wz;
        for (int32_t oy = 0; oy < {win.oh}; ++oy) {{
            const int32_t top = oy * {win.stride_h} - {win.pad_top};
            const int32_t ky0 = top < 0 ? (-top + {win.dil_h - 1}) / {win.dil_h} : 0;
            const int32_t ky_end = top > {win.h - 1} ? 0 : ({win.h - 1} - top) / {win.dil_h} + 1;
            const int32_t ky1 = ky_end < {win.kh} ? ky_end : {win.kh};
            int32_t ox = 0;
            {rows}
        }}
    }}
}}""".replace("<XT>", x.dtype.c_type).replace("<WT>", w.dtype.c_type)


def _block(win: Window, cg: int, size: int, last: int, tap: str, operand: str, bias: str, correction: str,
           store: str) -> str:
    """Outputs ``ox … ox + size - 1`` of a row, all with whole windows, while they end before ``last``."""
    return f"""for (; ox + {size} <= {last}; ox += {size}) {{
                    int32_t sums[{size}] = {{0}};
                    for (int32_t ci = 0; ci < {cg}; ++ci) {{
                        for (int32_t ky = ky0; ky < ky1; ++ky) {{
                            const <XT> *xr = xg + ci * {win.h * win.w} + (top + ky * {win.dil_h}) * {win.w}
                                           + ox * {win.stride_w} - {win.pad_left};
                            const <WT> *wr = wm + (ci * {win.kh} + ky) * {win.kw};
                            for (int32_t kx = 0; kx < {win.kw}; ++kx) {{
                                const int32_t weight = {tap};
                                const <XT> *xs = xr + kx * {win.dil_w};
                                for (int32_t j = 0; j < {size}; ++j) sums[j] += {operand} * weight;
                            }}
                        }}
                    }}
                    for (int32_t j = 0; j < {size}; ++j) {{
                        const int32_t acc = {bias} + sums[j]{correction};
                        {store}
                    }}
                }}
                """
