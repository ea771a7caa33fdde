"""Integer matrix products without scratch: vectorised along the output row, or along k for narrow outputs.

The plain ``i/j/k`` loop reads B down a column for every MAC and neither gcc
``-O2`` nor clang vectorises it.  With B untransposed (``[K, N]``, every MatMul
and Gemm with ``transB = 0``) output row ``i`` is a sum of B's rows scaled by
``A[i, k]``, so the j loop reads B and writes Y contiguously:

* ``row`` (N >= 16 or a short reduction): each output row is cut into
  constant-width segments (blocks of :data:`ROW_BLOCK` columns, then a multiple
  of 16, then a scalar tail) — gcc's very-cheap cost model only vectorises
  loops whose trip count is a known multiple of the vector width.  Up to
  :data:`UNROLLED_K` reduction steps are written out as one expression per
  output (EEGFormer's attention scores have k = 2, 66 x 66 outputs); longer
  reductions keep a block of int32 accumulators (``ROW_BLOCK`` x 4 bytes on the
  stack, nothing in the arena) that each k step adds a scaled row of B into.
* ``dot`` (N <= :data:`DOT_MAX_N`, k >= 16, A untransposed): one dot product
  per output along A's contiguous row, all N columns of B in the same k loop
  (gcc vectorises the group of N strided loads; clang does with its
  ``vectorize_width(8)`` hint, four times faster than its own choice).

Both keep int32 accumulators and the caller's epilogue (``store``), which runs
in int32 when the requantisation's bounds prove it exact.  Nothing is
allocated, so the kernels need no scratch; tiled builds still keep the plain
loop (their tiles are small and the tiler's cost model knows that loop).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from deeploy_core.plugin_api import Buffer
from deeploy_generic_c.kernels.integer_conv import NARROW_DATA
from deeploy_generic_c.kernels.dot_block import CLANG_WIDTH_8, indent

ROW_BLOCK = 64
"""Columns per accumulator block: 16 SSE registers' worth of int32, small enough to stay in L1 on any core."""

UNROLLED_K = 4
"""Reductions up to this length are one expression per output (no accumulator block)."""

DOT_MAX_N = 8
"""Narrow outputs up to this many columns take the ``dot`` kernel when the reduction is long."""

GCC_IVDEP = ("#if defined(__GNUC__) && !defined(__clang__)\n"
             "#pragma GCC ivdep\n"
             "#endif\n")
"""Placed right before a loop over the output row.  The operands are ``restrict`` pointers into the one arena,
and gcc 12 then neither trusts ``restrict`` nor vectorises (it would need a run-time alias check, which its
``-O2`` cost model refuses); the pragma states what ``restrict`` already says.  clang needs no hint."""

Store = Callable[[str, str, str, str], str]
"""``store(target, acc, i, j)``: C statements writing the int32 sum ``acc`` of output (i, j) to ``target``."""


@dataclass(frozen=True)
class MatrixProduct:
    """``Y[i, j] = sum_k op(A)[i, k] B[k, j]`` for one batch element; the offsets are C expressions of the batch loop."""

    m: int
    n: int
    k: int
    a: Buffer
    b: Buffer
    y: Buffer
    a_offset: str
    b_offset: str
    y_offset: str
    trans_a: bool
    store: Store
    preamble: str = ""
    """C declarations at the top of each batch element (``restrict`` pointers to the parameters ``store`` reads)."""

    @property
    def kind(self) -> str:
        """``dot`` for narrow outputs with a long contiguous reduction, else ``row``."""
        if self.n <= DOT_MAX_N and self.k >= 16 and not self.trans_a:
            return "dot"
        return "row"


def applies(a: Buffer, b: Buffer, for_tiles: bool) -> bool:
    """8/16-bit operands in an untiled build (products and sums then stay exact in int32 as in the plain loop)."""
    return not for_tiles and a.dtype.c_type in NARROW_DATA and b.dtype.c_type in NARROW_DATA


def product_bound(a: Buffer, b: Buffer, k: int) -> int:
    """``k * max|a| * max|b|`` over the operands' types: a bound on ``|sum_k a b|`` whatever the data."""
    largest = [max(abs(int(np.iinfo(t.dtype.numpy).min)), int(np.iinfo(t.dtype.numpy).max)) for t in (a, b)]
    return k * largest[0] * largest[1]


def largest_value(buffer: Buffer | None) -> int | None:
    """``max|values|`` of a constant buffer, 0 without one, None when it is computed at run time."""
    if buffer is None:
        return 0
    if buffer.values is None:
        return None
    return int(np.max(np.abs(np.asarray(buffer.values, dtype=np.int64)))) if buffer.numel else 0


def segments(n: int) -> list[tuple[int, int, int]]:
    """``(start, width, count)``: ``count`` blocks of ``width`` columns from ``start``, covering ``[0, n)``.

    Full blocks of :data:`ROW_BLOCK`, then the largest multiple of 16 left,
    then the rest: every width is a compile-time constant, and all but the last
    are multiples of the widest SSE vector of int8 lanes.
    """
    parts, start = [], 0
    if n >= ROW_BLOCK:
        parts.append((0, ROW_BLOCK, n // ROW_BLOCK))
        start = n // ROW_BLOCK * ROW_BLOCK
    rest = n - start
    if rest >= 16:
        parts.append((start, rest // 16 * 16, 1))
        start += rest // 16 * 16
    if n > start:
        parts.append((start, n - start, 1))
    return parts


def _pointers(p: MatrixProduct, row: str) -> str:
    """``restrict`` pointers to this batch element's A row (or column when transposed), B and Y row."""
    at, bt, yt = p.a.dtype.c_type, p.b.dtype.c_type, p.y.dtype.c_type
    a_start = f"{p.a_offset} + {row}" if p.trans_a else f"{p.a_offset} + {row} * {p.k}"
    return (f"const {at} *restrict const dc_a = {p.a.c_name} + {a_start};\n"
            f"const {bt} *restrict const dc_b = {p.b.c_name} + {p.b_offset};\n"
            f"{yt} *restrict const dc_y = {p.y.c_name} + {p.y_offset} + {row} * {p.n};")


def _a(p: MatrixProduct, kk: int | str) -> str:
    """A[i, kk] through ``dc_a`` as int32."""
    return f"(int32_t)dc_a[{kk} * {p.m}]" if p.trans_a else f"(int32_t)dc_a[{kk}]"


PAIR_TYPES = ("int8_t", "uint8_t")
"""Operand types whose products the row kernel may add two at a time in 16 bits (see :func:`pairs_fit_int16`)."""


def pairs_fit_int16(p: MatrixProduct) -> bool:
    """Whether two products ``a·b`` of the row kernel always sum inside int16 (8-bit A, constant 8-bit B).

    Then two k steps are added in 16 bits and widened once,
    ``acc += (int16_t)(a0·b0 + a1·b1)``: the cast keeps the value (the sum is
    in range by this bound), so the int32 accumulator is the same, and gcc
    ``-O2`` does the multiplies and the pair's sum in eight 16-bit lanes
    (``pmullw``, ``paddw``) where one product per step needed the 32-bit
    widening of both halves: the FC autoencoder's 640x128 layers 1.4x faster.
    TFLite's symmetric weights (|b| <= 127) with int8 activations
    (2·128·127 = 32512) fit; uint8 activations or weights of -128 do not.
    """
    if p.a.dtype.c_type not in PAIR_TYPES or p.b.dtype.c_type not in PAIR_TYPES or p.k < 2:
        return False
    b_max = largest_value(p.b)
    if b_max is None:
        return False
    info = np.iinfo(p.a.dtype.numpy)
    a_max = max(abs(int(info.min)), int(info.max))
    return 2 * a_max * b_max <= 32767


def _row_kernel(p: MatrixProduct) -> str:
    """The ``row`` kernel (see the module docstring) for one batch element."""
    blocks = []
    for start, width, count in segments(p.n):
        if count > 1:
            head = f"for (int32_t dc_j0 = {start}; dc_j0 < {start + count * width}; dc_j0 += {width}) {{"
        else:
            head = f"{{\n    const int32_t dc_j0 = {start};"
        if p.k <= UNROLLED_K:
            terms = " + ".join(f"dc_a{kk} * (int32_t)dc_b[{kk * p.n} + j]" for kk in range(p.k)) or "0"
            body = (f"{GCC_IVDEP}for (int32_t dc_c = 0; dc_c < {width}; ++dc_c) {{\n"
                    f"    const int32_t j = dc_j0 + dc_c;\n"
                    f"    const int32_t dc_sum = {terms};\n"
                    f"{indent(p.store('dc_y[j]', 'dc_sum', 'i', 'j'), 4)}\n}}")
        else:
            pairs = p.k - p.k % 2 if pairs_fit_int16(p) else 0
            paired = "" if not pairs else (
                    f"for (int32_t kk = 0; kk < {pairs}; kk += 2) {{\n"
                    f"    const int16_t dc_a0 = (int16_t){_a(p, 'kk')}, dc_a1 = (int16_t){_a(p, '(kk + 1)')};\n"
                    f"    const {p.b.dtype.c_type} *restrict const dc_b0 = dc_b + kk * {p.n} + dc_j0;\n"
                    f"    const {p.b.dtype.c_type} *restrict const dc_b1 = dc_b0 + {p.n};\n"
                    f"{GCC_IVDEP}"
                    f"    for (int32_t dc_c = 0; dc_c < {width}; ++dc_c) "
                    f"dc_acc[dc_c] += (int16_t)(dc_a0 * dc_b0[dc_c] + dc_a1 * dc_b1[dc_c]);\n"
                    f"}}\n")
            single = "" if pairs == p.k else (
                    f"for (int32_t kk = {pairs}; kk < {p.k}; ++kk) {{\n"
                    f"    const int32_t dc_av = {_a(p, 'kk')};\n"
                    f"    const {p.b.dtype.c_type} *restrict const dc_bk = dc_b + kk * {p.n} + dc_j0;\n"
                    f"{GCC_IVDEP}"
                    f"    for (int32_t dc_c = 0; dc_c < {width}; ++dc_c) dc_acc[dc_c] += dc_av * (int32_t)dc_bk[dc_c];\n"
                    f"}}\n")
            body = (f"int32_t dc_acc[{width}];\n"
                    f"for (int32_t dc_c = 0; dc_c < {width}; ++dc_c) dc_acc[dc_c] = 0;\n"
                    f"{paired}{single}"
                    f"{GCC_IVDEP}for (int32_t dc_c = 0; dc_c < {width}; ++dc_c) {{\n"
                    f"    const int32_t j = dc_j0 + dc_c;\n"
                    f"{indent(p.store('dc_y[j]', 'dc_acc[dc_c]', 'i', 'j'), 4)}\n}}")
        blocks.append(f"{head}\n{indent(body, 4)}\n}}")
    scalars = "".join(f"const int32_t dc_a{kk} = {_a(p, kk)};\n" for kk in range(p.k)) if p.k <= UNROLLED_K else ""
    return (f"for (int32_t i = 0; i < {p.m}; ++i) {{\n{indent(_pointers(p, 'i'), 4)}\n"
            f"{indent(scalars + chr(10).join(blocks), 4)}\n}}")


def _dot_kernel(p: MatrixProduct) -> str:
    """The ``dot`` kernel (see the module docstring) for one batch element."""
    n, k = p.n, p.k
    accs = [f"dc_acc{c}" for c in range(n)]

    def steps(first: int, last: int, hint: str) -> str:
        updates = " ".join(f"{acc} += dc_av * (int32_t)dc_b[kk * {n} + {c}];" for c, acc in enumerate(accs))
        return (f"{hint}for (int32_t kk = {first}; kk < {last}; ++kk) {{ "
                f"const int32_t dc_av = (int32_t)dc_a[kk]; {updates} }}")

    head = k - k % 16
    loops = [steps(0, head, CLANG_WIDTH_8)] + ([steps(head, k, "")] if k % 16 else [])
    stores = "\n".join(p.store(f"dc_y[{c}]", acc, "i", str(c)) for c, acc in enumerate(accs))
    return (f"for (int32_t i = 0; i < {p.m}; ++i) {{\n{indent(_pointers(p, 'i'), 4)}\n"
            f"    int32_t {', '.join(f'{acc} = 0' for acc in accs)};\n"
            f"{indent(chr(10).join(loops), 4)}\n{indent(stores, 4)}\n}}")


def kernel(p: MatrixProduct) -> str:
    """C for one batch element: loops over ``i`` (and ``j``), calling ``store`` with those names in scope."""
    return "{\n" + indent(p.preamble + (_dot_kernel(p) if p.kind == "dot" else _row_kernel(p)), 4) + "\n}"
