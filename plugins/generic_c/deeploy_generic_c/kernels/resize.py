"""The C of one Resize layer: tap tables and loops with constant bounds, summing in the reference's order.

ONNX's reference resizes one axis at a time in float64, each axis's taps
summed by a numpy reduction, and casts at the end.  The kernel computes the
same sums in the same order without an intermediate tensor: the taps of the
axis resized first are the innermost loop, and every level multiplies the sum
of the level inside by its own weight.  numpy sums fewer than eight taps from
left to right, but eight or more along a contiguous axis pairwise (eight
running sums, then a tree); such an axis gets that order here too
(:func:`pairwise_sum`).  With double accumulation (float64 and integer data)
the result is therefore the reference's bit for bit, so integer outputs round
at exact ties as it does; float32 data accumulates in float.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from deeploy_core.plugin_api import DataType, dtypes
from deeploy_generic_c.parsing.common import c_float
from deeploy_generic_c.parsing.resize_taps import AxisTaps

PAIRWISE_FROM = 8
"""numpy's pairwise summation (``pairwise_sum`` in its loops) starts at eight elements; below, it adds in order."""
PAIRWISE_BLOCK = 128
"""…and splits ranges longer than this in two halves, each a multiple of eight long (the first)."""


@dataclass(frozen=True)
class ResizeLoops:
    """One layer: element type, input strides, output shape, the taps of each resized axis, the order the
    reference resizes them in, which of them it sums pairwise, and the value outside a tf_crop_and_resize crop."""

    dtype: DataType
    in_strides: tuple[int, ...]
    out_shape: tuple[int, ...]
    taps: dict[int, AxisTaps]
    order: tuple[int, ...]
    pairwise: frozenset[int]
    extrapolation: float


def literal(value: float, dtype: DataType) -> str:
    """A weight or fill value in the accumulator's type: float for float32, double otherwise."""
    if dtype is dtypes.FLOAT32:
        return c_float(value)
    if math.isinf(value):
        return "(-HUGE_VAL)" if value < 0 else "HUGE_VAL"
    return float(value).hex() if value != 0 else "0.0"


def store(dtype: DataType, target: str, value: str) -> str:
    """``target = value`` (the accumulator) in the output type: ONNX rounds integers half to even (rint() in C's
    default rounding mode) and saturates them; the comparisons keep the conversion in range (no undefined
    behaviour for 64-bit types, whose limits double cannot hold exactly)."""
    if dtype.is_float:
        return f"{target} = {value};"
    c_type = dtype.c_type
    if dtype.bits == 64:
        low, high = ("0", "UINT64_MAX") if not dtype.signed else ("INT64_MIN", "INT64_MAX")
        floor, ceiling = ("0.0", "0x1p64") if not dtype.signed else ("-0x1p63", "0x1p63")
        clamped = f"r <= {floor} ? ({c_type}){low} : r >= {ceiling} ? ({c_type}){high} : ({c_type})r"
    else:
        info = np.iinfo(dtype.numpy)
        low, high = f"{float(info.min)!r}", f"{float(info.max)!r}"
        clamped = f"({c_type})(r < {low} ? {low} : r > {high} ? {high} : r)"
    return f"{{ const double r = rint({value}); {target} = {clamped}; }}"


def _table(name: str, c_type: str, values: list[str]) -> str:
    return f"static const {c_type} {name}[{len(values)}] = {{{', '.join(values)}}};"


def pairwise_sum(terms: str, start: int, count: int, total: str, accumulator: str, indent: str) -> list[str]:
    """Statements adding ``terms[start .. start + count)`` into the declared ``total`` in numpy's pairwise order."""
    if count < PAIRWISE_FROM:
        return [f"{indent}for (int32_t k = {start}; k < {start + count}; ++k) {total} += {terms}[k];"]
    if count > PAIRWISE_BLOCK:
        half = count // 2
        half -= half % 8
        left, right = f"{total}_l", f"{total}_r"
        return ([f"{indent}{accumulator} {left} = 0, {right} = 0;"]
                + pairwise_sum(terms, start, half, left, accumulator, indent)
                + pairwise_sum(terms, start + half, count - half, right, accumulator, indent)
                + [f"{indent}{total} += {left} + {right};"])
    blocked = count - count % 8
    return [
        f"{indent}{{",
        f"{indent}    {accumulator} s[8];",
        f"{indent}    for (int32_t j = 0; j < 8; ++j) s[j] = {terms}[{start} + j];",
        f"{indent}    for (int32_t k = {start + 8}; k < {start + blocked}; k += 8)",
        f"{indent}        for (int32_t j = 0; j < 8; ++j) s[j] += {terms}[k + j];",
        f"{indent}    {total} += ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));",
        f"{indent}    for (int32_t k = {start + blocked}; k < {start + count}; ++k) {total} += {terms}[k];",
        f"{indent}}}",
    ]


def _tables(loops: ResizeLoops, accumulator: str) -> list[str]:
    lines = []
    for axis, taps in sorted(loops.taps.items()):
        stride = loops.in_strides[axis]
        lines.append(_table(f"dcg_rs_at{axis}", "int32_t", [str(int(i) * stride) for i in taps.indices.reshape(-1)]))
        if taps.count > 1:
            lines.append(_table(f"dcg_rs_w{axis}", accumulator,
                                [literal(float(w), loops.dtype) for w in taps.weights.reshape(-1)]))
        if taps.outside.any():
            lines.append(_table(f"dcg_rs_out{axis}", "uint8_t", [str(int(flag)) for flag in taps.outside]))
    return lines


def _tap_levels(loops: ResizeLoops, levels: list[int], offset: str, accumulator: str, indent: str) -> list[str]:
    """Statements leaving in ``v<axis>`` (of ``levels[0]``) the weighted sum over its taps of the levels inside
    (``levels`` outermost first: the axis the reference resizes last comes first)."""
    axis, inner = levels[0], levels[1:]
    n = loops.taps[axis].count
    position, weight = f"dcg_rs_at{axis}[i{axis} * {n} + t{axis}]", f"dcg_rs_w{axis}[i{axis} * {n} + t{axis}]"
    body = [f"{indent}    const int32_t p{axis} = {offset} + {position};"]
    if inner:
        body += _tap_levels(loops, inner, f"p{axis}", accumulator, indent + "    ")
        value = f"v{inner[0]}"
    else:
        value = f"dcg_rs_x[p{axis}]"
    if axis in loops.pairwise:
        return ([f"{indent}{accumulator} q{axis}[{n}], v{axis} = 0;",
                 f"{indent}for (int32_t t{axis} = 0; t{axis} < {n}; ++t{axis}) {{"] + body
                + [f"{indent}    q{axis}[t{axis}] = {value} * {weight};", f"{indent}}}"]
                + pairwise_sum(f"q{axis}", 0, n, f"v{axis}", accumulator, indent))
    return ([f"{indent}{accumulator} v{axis} = 0;", f"{indent}for (int32_t t{axis} = 0; t{axis} < {n}; ++t{axis}) {{"]
            + body + [f"{indent}    v{axis} += {value} * {weight};", f"{indent}}}"])


def resize_code(x: str, y: str, loops: ResizeLoops) -> str:
    """The C statements of one Resize layer (a block of its own: the tables are local to it)."""
    c_type, accumulator = loops.dtype.c_type, "float" if loops.dtype is dtypes.FLOAT32 else "double"
    lines = ["{", f"    const {c_type} *dcg_rs_x = (const {c_type} *){x};", f"    {c_type} *dcg_rs_y = ({c_type} *){y};"]
    lines += ["    " + line for line in _tables(loops, accumulator)]
    lines.append("    int32_t dcg_rs_o = 0;")
    # one loop per output axis (axes of length one need none); at each, the input offset reached so far
    depth, offset = 1, "0"
    for axis, count in enumerate(loops.out_shape):
        taps = loops.taps.get(axis)
        if count == 1 and taps is None:
            continue
        indent = "    " * depth
        lines.append(f"{indent}for (int32_t i{axis} = 0; i{axis} < {count}; ++i{axis}) {{")
        stride = loops.in_strides[axis]
        term = (f"i{axis}" if stride == 1 else f"i{axis} * {stride}") if taps is None else (
            f"dcg_rs_at{axis}[i{axis}]" if taps.count == 1 else "")
        if term:
            lines.append(f"{indent}    const int32_t b{axis} = {term if offset == '0' else f'{offset} + {term}'};")
            offset = f"b{axis}"
        depth += 1
    indent = "    " * depth
    outside = [f"dcg_rs_out{axis}[i{axis}]" for axis, taps in sorted(loops.taps.items()) if taps.outside.any()]
    if outside:
        fill = store(loops.dtype, "dcg_rs_y[dcg_rs_o++]", literal(loops.extrapolation, loops.dtype))
        lines.append(f"{indent}if ({' | '.join(outside)}) {{ {fill} continue; }}")
    levels = [axis for axis in reversed(loops.order) if loops.taps[axis].count > 1]
    if not levels:
        lines.append(f"{indent}dcg_rs_y[dcg_rs_o++] = dcg_rs_x[{offset}];")
    else:
        lines.append(f"{indent}{{")
        lines += _tap_levels(loops, levels, offset, accumulator, indent + "    ")
        lines.append(f"{indent}    {store(loops.dtype, 'dcg_rs_y[dcg_rs_o++]', f'v{levels[0]}')}")
        lines.append(f"{indent}}}")
    for level in range(depth - 1, 0, -1):
        lines.append("    " * level + "}")
    lines.append("}")
    return "\n".join(lines)
