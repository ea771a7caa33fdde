"""The integer dot-product block that every fast integer kernel ends in: int16 rows against int8/int16 weight rows.

A convolution or a matrix product becomes, after its operand has been
widened into rows of ``k`` int16 values (im2col rows, transposed pixels, a
row of A), one dot product of each row with each weight row.  Four rows share
every weight load, and the reduction loop has a constant trip count that is a
multiple of eight with no other exit, which is the shape both gcc ``-O2``
(its very-cheap cost model refuses loops that need an epilogue) and clang turn
into ``pmaddwd`` on SSE2 (eight int16 products added in pairs into int32
lanes).  clang would otherwise pick four int32 lanes, half the rate, so the
loop carries clang's own ``vectorize_width`` hint behind ``__clang__`` (gcc's
``-Wall`` would warn about an unknown pragma).  The remainder of ``k`` modulo
eight runs as a scalar tail.
"""

from __future__ import annotations

from collections.abc import Callable

Store = Callable[[str, str], str]
"""C statements consuming an accumulator: ``store(acc, row)`` with C expressions for the int32 sum and its row."""

CLANG_WIDTH_8 = ("#if defined(__clang__)\n"
                 "#pragma clang loop vectorize_width(8) interleave_count(1)\n"
                 "#endif\n")
"""Placed right before a reduction loop: clang vectorises it with eight int16 lanes (pmaddwd) instead of four."""


def _reduction(k: int, weights: str, rows: list[str], accumulators: list[str]) -> str:
    """``acc_i += w[kk] * row_i[kk]`` for kk in [0, k): a vectorisable body of k & ~7 and a scalar tail."""
    body = " ".join(f"{acc} += wk * (int32_t){row}[kk];" for acc, row in zip(accumulators, rows))
    head, lines = k - k % 8, []
    if head:
        lines.append(CLANG_WIDTH_8 + f"for (int32_t kk = 0; kk < {head}; ++kk) {{ const int32_t wk = (int32_t){weights}[kk]; {body} }}")
    if k % 8:
        lines.append(f"for (int32_t kk = {head}; kk < {k}; ++kk) {{ const int32_t wk = (int32_t){weights}[kk]; {body} }}")
    return "\n".join(lines)


def dot_rows(count: str, k: int, rows: str, weights: str, initial: str, store: Store, index: str = "dc_r") -> str:
    """C code: for each row ``index`` in [0, ``count``), ``acc = initial + <weights, rows + index*k>``, then ``store``.

    ``rows`` points at ``count`` int16 rows of ``k`` values, ``weights`` at
    one row of ``k`` values.  Rows go four at a time; ``count`` may be a
    run-time expression (the reduction keeps its constant trip count).  The
    last rows (at most three) run in a loop bounded by 3 as well: with only
    the run-time bound, gcc 12 warns (-Waggressive-loop-optimizations) that
    a far iteration would overflow the row index, which -Werror builds refuse.
    """
    four = [f"dc_acc{i}" for i in range(4)]
    stores = "\n".join(store(f"dc_acc{i}", f"({index} + {i})") for i in range(4))
    rows4 = [f"dc_row{i}" for i in range(4)]
    return f"""{{
    int32_t {index} = 0;
    const int16_t *dc_rows = {rows};
    for (; {index} + 4 <= ({count}); {index} += 4, dc_rows += {4 * k}) {{
        const int16_t *const dc_row0 = dc_rows;
        const int16_t *const dc_row1 = dc_rows + {k};
        const int16_t *const dc_row2 = dc_rows + {2 * k};
        const int16_t *const dc_row3 = dc_rows + {3 * k};
        int32_t {', '.join(f'{acc} = {initial}' for acc in four)};
{indent(_reduction(k, weights, rows4, four), 8)}
{indent(stores, 8)}
    }}
    for (int32_t dc_tail = 0; dc_tail < 3 && {index} < ({count}); ++dc_tail, ++{index}, dc_rows += {k}) {{
        const int16_t *const dc_row0 = dc_rows;
        int32_t dc_acc0 = {initial};
{indent(_reduction(k, weights, ['dc_row0'], ['dc_acc0']), 8)}
        {store("dc_acc0", index)}
    }}
}}"""


def dot_rows_pair(count: str, k: int, rows: str, weights: tuple[str, str], initial: tuple[str, str],
                  store: tuple[Store, Store], index: str = "dc_r") -> str:
    """:func:`dot_rows` for two weight rows at once: every row load feeds two products.

    Four rows times two weight rows keep eight accumulators, which with the
    four row vectors and two weight vectors fill SSE2's sixteen registers; each
    int16 row vector loaded now serves two ``pmaddwd`` instead of one.
    """
    names = [[f"dc_acc{w}{i}" for i in range(4)] for w in range(2)]
    rows4 = [f"dc_row{i}" for i in range(4)]

    def reduction(count_rows: int) -> str:
        body = " ".join(f"{names[w][i]} += dc_wk{w} * (int32_t){rows4[i]}[kk];"
                        for i in range(count_rows) for w in range(2))
        load = f"const int32_t dc_wk0 = (int32_t){weights[0]}[kk]; const int32_t dc_wk1 = (int32_t){weights[1]}[kk];"
        head, lines = k - k % 8, []
        if head:
            lines.append(CLANG_WIDTH_8 + f"for (int32_t kk = 0; kk < {head}; ++kk) {{ {load} {body} }}")
        if k % 8:
            lines.append(f"for (int32_t kk = {head}; kk < {k}; ++kk) {{ {load} {body} }}")
        return "\n".join(lines)

    def declare(count_rows: int) -> str:
        return "int32_t " + ", ".join(f"{names[w][i]} = {initial[w]}" for w in range(2) for i in range(count_rows)) + ";"

    stores4 = "\n".join(store[w](names[w][i], f"({index} + {i})") for w in range(2) for i in range(4))
    stores1 = "\n".join(store[w](names[w][0], index) for w in range(2))
    pointers = "\n".join(f"const int16_t *const dc_row{i} = dc_rows + {i * k};" for i in range(4))
    return f"""{{
    int32_t {index} = 0;
    const int16_t *dc_rows = {rows};
    for (; {index} + 4 <= ({count}); {index} += 4, dc_rows += {4 * k}) {{
{indent(pointers, 8)}
        {declare(4)}
{indent(reduction(4), 8)}
{indent(stores4, 8)}
    }}
    for (int32_t dc_tail = 0; dc_tail < 3 && {index} < ({count}); ++dc_tail, ++{index}, dc_rows += {k}) {{
        const int16_t *const dc_row0 = dc_rows;
        {declare(1)}
{indent(reduction(1), 8)}
{indent(stores1, 8)}
    }}
}}"""


def indent(text: str, spaces: int) -> str:
    """``text`` indented by ``spaces``; preprocessor lines stay in column 0."""
    pad = " " * spaces
    return "\n".join(line if line.startswith("#") else pad + line for line in text.splitlines())
