"""Integer Gemm with ``transB = 1``: each output is a dot product of two contiguous rows.

With B stored ``[N, K]`` (every Gemm of AnomalyDetection), output ``(i, j)`` is
``A[i, :] . B[j, :]``.  The plain loop computes it one output at a time with
the 8-bit operands widened to int32 inside the loop; gcc ``-O2`` vectorises
that with byte-to-dword unpacking and ``pmulld``-free multiplies, 10 µs for a
640 x 128 layer.  Here A's row is widened once into an int16 copy on the stack
(at most :data:`MAX_K` entries, nothing in the arena), and each k step
multiplies it with four rows of B sign- or zero-extended to int16: gcc
recognises the int16 x int16 → int32 sum as a dot product (``pmaddwd`` on
SSE2), 2.6x faster on that layer, and the four columns share every load of A.
An 8-bit product fits int16 x int16 exactly and the sums are the plain loop's
int32 sums, so the results are bit-identical.  The k loop is split into a
multiple of 16 and a constant tail (gcc's very-cheap cost model refuses a loop
that would need a run-time epilogue; clang 14 gets the head with eight lanes, 1.2x faster than its own
choice of four), and the epilogue (``store``) is the
caller's: int32 when the requantisation's bounds prove it exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from deeploy_core.plugin_api import Buffer
from deeploy_generic_c.kernels.dot_block import CLANG_WIDTH_8, indent
from deeploy_generic_c.kernels.matmul_rows import Store

BYTE_TYPES = ("int8_t", "uint8_t")

MAX_K = 4096
"""Longest reduction that takes the kernel: A's widened row (2 bytes per entry) lives on the stack."""

COLUMNS = 4
"""Outputs computed together: four int32 vector accumulators plus A's and B's vectors fit SSE2's 16 registers."""


def applies(a: Buffer, b: Buffer, k: int, for_tiles: bool) -> bool:
    """8-bit operands, a reduction short enough for the stack copy, an untiled build (tiles keep the plain loop
    whose cost the tiler's model knows)."""
    return not for_tiles and a.dtype.c_type in BYTE_TYPES and b.dtype.c_type in BYTE_TYPES and 0 < k <= MAX_K


@dataclass(frozen=True)
class RowDotProduct:
    """``Y[i, j] = sum_k A[i, k] B[j, k]`` for dense A ``[M, K]``, B ``[N, K]`` and Y ``[M, N]``."""

    m: int
    n: int
    k: int
    a: Buffer
    b: Buffer
    y: Buffer
    store: Store
    preamble: str = ""
    """Declarations before the loops (``restrict`` pointers to the epilogue's parameters)."""


def _k_loops(p: RowDotProduct, columns: int) -> str:
    """The reduction over k for ``columns`` accumulators ``dc_s<c>`` reading rows ``dc_b<c>``."""
    updates = " ".join(f"dc_s{c} += dc_av * (int16_t)dc_b{c}[kk];" for c in range(columns))
    head = p.k - p.k % 16
    loops = []
    for first, last, hint in ((0, head, CLANG_WIDTH_8), (head, p.k, "")):
        if last > first:
            loops.append(f"{hint}for (int32_t kk = {first}; kk < {last}; ++kk) {{ const int16_t dc_av = dc_a16[kk]; {updates} }}")
    return "\n".join(loops)


def _block(p: RowDotProduct, columns: int, j: str) -> str:
    """One group of ``columns`` outputs starting at column ``j`` (a loop counter or a constant)."""
    bt = p.b.dtype.c_type
    rows = "\n".join(f"const {bt} *restrict const dc_b{c} = {p.b.c_name} + ({j} + {c}) * {p.k};" for c in range(columns))
    sums = "int32_t " + ", ".join(f"dc_s{c} = 0" for c in range(columns)) + ";"
    stores = "\n".join(p.store(f"dc_y[{j} + {c}]", f"dc_s{c}", "i", f"({j} + {c})") for c in range(columns))
    return f"{rows}\n{sums}\n{_k_loops(p, columns)}\n{stores}"


def kernel(p: RowDotProduct) -> str:
    """C for the whole product: rows of A widened once, then groups of :data:`COLUMNS` outputs and a tail."""
    at, yt = p.a.dtype.c_type, p.y.dtype.c_type
    full = p.n - p.n % COLUMNS
    parts = [f"for (int32_t kk = 0; kk < {p.k}; ++kk) dc_a16[kk] = (int16_t)dc_a[kk];"]
    if full:
        parts.append(f"for (int32_t j = 0; j < {full}; j += {COLUMNS}) {{\n{indent(_block(p, COLUMNS, 'j'), 4)}\n}}")
    if p.n > full:
        parts.append(f"{{\n{indent(_block(p, p.n - full, str(full)), 4)}\n}}")
    body = (f"const {at} *restrict const dc_a = {p.a.c_name} + i * {p.k};\n"
            f"{yt} *restrict const dc_y = {p.y.c_name} + i * {p.n};\n" + "\n".join(parts))
    return (f"{{\n{indent(p.preamble, 4)}\n    int16_t dc_a16[{p.k}];\n"
            f"    for (int32_t i = 0; i < {p.m}; ++i) {{\n{indent(body, 8)}\n    }}\n}}")
