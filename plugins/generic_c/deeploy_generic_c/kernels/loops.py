"""Element-wise loops written into the generated code, specialised to one layer's shapes.

A call into a runtime kernel costs about as many bytes as a loop with constant
bounds (the arguments are loaded either way), and the kernel behind it handles
every stride pattern and rank the operator allows: ``binary_row_add`` alone is
530 bytes of x86-64 code and the rank-8 broadcaster another 730.  A loop with
the layer's own trip counts is as small as the call, needs no kernel at all,
and with a constant trip count gcc ``-O2`` vectorises it (its cheap cost model
refuses loops that need a runtime trip count check).  Broadcasting is written
as one loop per dimension of the collapsed iteration space (size-1 axes
dropped, axes contiguous for every operand merged), so a bias over rows is two
loops, whatever rank the tensors had.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from deeploy_generic_c.parsing.common import broadcast_strides, c_float, collapse_broadcast

Expression = Callable[[str, str], str]


def _index(strides: Sequence[int]) -> str:
    """``i0 * s0 + i1 * s1 …`` over the loop counters, leaving out broadcast (stride 0) axes."""
    terms = [f"i{axis}" if stride == 1 else f"i{axis} * {stride}"
             for axis, stride in enumerate(strides) if stride != 0]
    return " + ".join(terms) or "0"


def _dense(shape: Sequence[int]) -> list[int]:
    strides, running = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = running
        running *= shape[axis]
    return strides


def flat_loop(count: int, body: str) -> str:
    """``for (i < count) body`` where ``body`` uses ``i``."""
    return f"for (int32_t i = 0; i < {count}; ++i) {{ {body} }}"


def binary_loop(expression: Expression, a: str, a_shape: tuple[int, ...], b: str, b_shape: tuple[int, ...],
                y: str, y_shape: tuple[int, ...]) -> str:
    """``y = expression(a, b)`` with numpy broadcasting, as C loops with the layer's constant bounds.

    A one-element operand is read once before the loop (so the loop body has
    a single memory stream per operand and vectorises); operands of the
    output's size are read flat; anything else loops over the collapsed
    broadcast space.
    """
    count = 1
    for dim in y_shape:
        count *= dim
    a_count = b_count = 1
    for dim in a_shape:
        a_count *= dim
    for dim in b_shape:
        b_count *= dim
    if a_count == b_count == count:
        return flat_loop(count, f"const float x = {a}[i], w = {b}[i]; {y}[i] = {expression('x', 'w')};")
    if b_count == 1 and a_count == count:
        return (f"{{ const float w = {b}[0]; "
                + flat_loop(count, f"const float x = {a}[i]; {y}[i] = {expression('x', 'w')};") + " }")
    if a_count == 1 and b_count == count:
        return (f"{{ const float x = {a}[0]; "
                + flat_loop(count, f"const float w = {b}[i]; {y}[i] = {expression('x', 'w')};") + " }")
    shape, (a_strides, b_strides) = collapse_broadcast(
        y_shape, [broadcast_strides(a_shape, y_shape), broadcast_strides(b_shape, y_shape)])
    y_strides = _dense(shape)
    lines = []
    for axis, dim in enumerate(shape):
        lines.append("    " * axis + f"for (int32_t i{axis} = 0; i{axis} < {dim}; ++i{axis}) {{")
    depth = "    " * len(shape)
    lines.append(f"{depth}const float x = {a}[{_index(a_strides)}], w = {b}[{_index(b_strides)}];")
    lines.append(f"{depth}{y}[{_index(y_strides)}] = {expression('x', 'w')};")
    for axis in range(len(shape) - 1, -1, -1):
        lines.append("    " * axis + "}")
    return "\n".join(lines)


BINARY_EXPRESSIONS: dict[str, Expression] = {
    "add": lambda x, w: f"{x} + {w}",
    "sub": lambda x, w: f"{x} - {w}",
    "mul": lambda x, w: f"{x} * {w}",
    "div": lambda x, w: f"{x} / {w}",
    "pow": lambda x, w: f"powf({x}, {w})",
    # fmaxf/fminf semantics (a NaN operand gives the other one), written so that gcc vectorises them.
    "max": lambda x, w: f"({x} >= {w} || {w} != {w}) ? {x} : {w}",
    "min": lambda x, w: f"({x} <= {w} || {w} != {w}) ? {x} : {w}",
}
"""The C expression of each binary operator; the same semantics as runtime/src/elementwise_binary.c."""


def clip_loop(x: str, y: str, count: int, low: str | None, high: str | None) -> str:
    """``y = min(max(x, low), high)`` (the order ONNX gives), leaving out an infinite bound."""
    steps = [f"float v = {x}[i];"]
    if low is not None:
        steps.append(f"v = v < {low} ? {low} : v;")
    if high is not None:
        steps.append(f"v = v > {high} ? {high} : v;")
    steps.append(f"{y}[i] = v;")
    return flat_loop(count, " ".join(steps))


SMALL_PRODUCT_MACS = 2048
"""Matrix products up to this many multiply-accumulates are written as loops in the layer; larger ones call the
register-blocked kernel of runtime/src/matmul.c, whose packing and tiles only pay off on bigger operands (and
whose ~5 KB of code a network with only tiny products should not carry)."""


def _vector_product(a: str, a_index: Callable[[str, str], str], b: str, b_index: Callable[[str, str], str], y: str,
                    y_row: str, m: int, n: int, k: int, block: int, indent: str) -> list[str]:
    """:func:`product_loop`'s blocks with the accumulators as 4-float vectors (GNU C ``vector_size``, which gcc and
    clang lower to SSE/NEON registers or to scalars).  Why: gcc -O2 vectorises the ``acc[8]`` array loop but keeps
    the array on the stack, a store and reload per ``p`` on the critical path; CCT_1_16_16_8's 64 x 8 x 64
    attention product then ran at a third of the blocked kernel's speed.  Same sums in the same order."""
    vectors = block // 4
    lines = [f"{indent}for (int32_t i = 0; i < {m}; ++i) {{"]
    inner = indent + "    "
    if block < n:
        lines.append(f"{inner}for (int32_t j0 = 0; j0 < {n}; j0 += {block}) {{")
        inner += "    "
    column = (lambda t: "j0" if t == 0 else f"j0 + {t}") if block < n else str
    lines += [
        f"{inner}typedef float dcg_f4 __attribute__((vector_size(16), aligned(4)));",
        f"{inner}dcg_f4 " + ", ".join(f"acc{v} = {{0.0f, 0.0f, 0.0f, 0.0f}}" for v in range(vectors)) + ";",
        f"{inner}for (int32_t p = 0; p < {k}; ++p) {{",
        f"{inner}    const float x = {a}[{a_index('i', 'p')}];",
        *(f"{inner}    acc{v} += x * *(const dcg_f4 *)&{b}[{b_index('p', column(4 * v))}];" for v in range(vectors)),
        f"{inner}}}",
        *(f"{inner}*(dcg_f4 *)&{y}[{y_row} + {column(4 * v)}] = acc{v};" for v in range(vectors)),
    ]
    if block < n:
        lines.append(f"{indent}    }}")
    lines.append(f"{indent}}}")
    return lines


def product_loop(a: str, a_index: Callable[[str, str], str], b: str, b_index: Callable[[str, str], str], y: str,
                 y_row: str, m: int, n: int, k: int, indent: str = "", contiguous_b: bool = False) -> list[str]:
    """``Y[i, j] = sum_p A[i, p] * B[p, j]`` for one matrix, summed from 0 in increasing ``p``: the order of the
    blocked kernel's register tiles, so small and large layers round alike.  ``a_index(i, p)``/``b_index(p, j)``
    give the element offsets, ``y_row`` the offset of row ``i`` of Y (which is dense, N per row).

    Columns go in blocks of 8 (or 4) accumulators that live in registers for the whole ``p`` loop (gcc
    vectorises the constant-length block); accumulating into Y itself instead reloads and stores every output
    once per ``p`` and ran 2-4x slower on Transformer_DeepQuant's 4x16x32 product.
    """
    block = next((size for size in (8, 4) if n % size == 0), n if n <= 8 else 0)
    if block == 0:
        return [
            f"{indent}for (int32_t i = 0; i < {m}; ++i) {{",
            f"{indent}    for (int32_t j = 0; j < {n}; ++j) {y}[{y_row} + j] = 0.0f;",
            f"{indent}    for (int32_t p = 0; p < {k}; ++p) {{",
            f"{indent}        const float x = {a}[{a_index('i', 'p')}];",
            f"{indent}        for (int32_t j = 0; j < {n}; ++j) {y}[{y_row} + j] += x * {b}[{b_index('p', 'j')}];",
            f"{indent}    }}",
            f"{indent}}}",
        ]
    if block in (4, 8) and contiguous_b:
        return _vector_product(a, a_index, b, b_index, y, y_row, m, n, k, block, indent)
    return [
        f"{indent}for (int32_t i = 0; i < {m}; ++i) {{",
        f"{indent}    for (int32_t j0 = 0; j0 < {n}; j0 += {block}) {{",
        f"{indent}        float acc[{block}] = {{0.0f}};",
        f"{indent}        for (int32_t p = 0; p < {k}; ++p) {{",
        f"{indent}            const float x = {a}[{a_index('i', 'p')}];",
        f"{indent}            for (int32_t t = 0; t < {block}; ++t) acc[t] += x * {b}[{b_index('p', 'j0 + t')}];",
        f"{indent}        }}",
        f"{indent}        for (int32_t t = 0; t < {block}; ++t) {y}[{y_row} + j0 + t] = acc[t];",
        f"{indent}    }}",
        f"{indent}}}",
    ]


def _offset(base: str, term: str) -> str:
    return term if base == "0" else (base if term == "0" else f"{base} + {term}")


def matmul_loop(a: str, b: str, y: str, m: int, n: int, k: int, batch: Sequence[int], a_strides: Sequence[int],
                b_strides: Sequence[int]) -> str:
    """numpy matmul of dense operands, batch dimensions broadcast (``a_strides``/``b_strides``: in matrices)."""
    shape, (a_batch, b_batch) = collapse_broadcast(tuple(batch), [list(a_strides), list(b_strides)])
    if shape == [1]:
        shape, a_batch, b_batch = [], [], []
    y_batch = _dense(shape)
    lines = [f"{'    ' * axis}for (int32_t b{axis} = 0; b{axis} < {dim}; ++b{axis}) {{" for axis, dim in enumerate(shape)]

    def matrix(strides: Sequence[int], size: int) -> str:
        terms = [f"b{axis} * {stride * size}" for axis, stride in enumerate(strides) if stride != 0]
        return " + ".join(terms) or "0"

    a_off, b_off, y_off = matrix(a_batch, m * k), matrix(b_batch, k * n), matrix(y_batch, m * n)
    lines += product_loop(a, lambda i, p: _offset(a_off, f"{i} * {k} + {p}"),
                          b, lambda p, j: _offset(b_off, f"{p} * {n} + {j}"),
                          y, _offset(y_off, f"i * {n}"), m, n, k, "    " * len(shape), contiguous_b=True)
    lines += ["    " * axis + "}" for axis in range(len(shape) - 1, -1, -1)]
    return "\n".join(lines)


def gemm_loop(a: str, b: str, c: str | None, y: str, m: int, n: int, k: int, trans_a: bool, trans_b: bool,
              alpha: float, beta: float, c_rows: int, c_cols: int) -> str:
    """ONNX Gemm, Y = alpha * (op(A) op(B)) + beta * C, with runtime/src/matmul.c's dcg_gemm_f32 rounding:
    the product first, then the epilogue (``c``: None without C or when beta is 0)."""
    lines = product_loop(a, (lambda i, p: f"{p} * {m} + {i}") if trans_a else (lambda i, p: f"{i} * {k} + {p}"),
                         b, (lambda p, j: f"({j}) * {k} + {p}") if trans_b else (lambda p, j: f"{p} * {n} + {j}"),
                         y, f"i * {n}", m, n, k)
    if c is None:
        if alpha != 1.0:
            lines.append(f"for (int32_t i = 0; i < {m * n}; ++i) {y}[i] = {c_float(alpha)} * {y}[i];")
        return "\n".join(lines)
    row = "0" if c_rows == 1 else f"i * {c_cols}"
    term = f"{c_float(beta)} * {c}[{row}]" if c_cols == 1 else f"{beta} * {c}[{_offset(row, 'j') if row != '0' else 'j'}]"
    lines.append(f"for (int32_t i = 0; i < {m}; ++i) {{")
    if c_cols == 1:
        lines.append(f"    const float bc = {term};")
        term = "bc"
    lines.append(f"    for (int32_t j = 0; j < {n}; ++j) {y}[i * {n} + j] = {c_float(alpha)} * {y}[i * {n} + j] + {term};")
    lines.append("}")
    return "\n".join(lines)
