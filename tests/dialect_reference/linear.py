"""numpy references of the linear ops of Deeploy's dialect: RQGemm, RQMatMul and MatMulInteger.

Written from ``deeploy-op-semantics.md``: §8 makes RQGemm/RQMatMul the unfused integer Gemm/MatMul (§3) followed
by RequantShift (§2); MatMulInteger is ONNX's operator (``(A - a_zero_point) @ (B - b_zero_point)`` in int32,
zero points per tensor, per row of A or per column of B), which Deeploy's Generic platform maps as integer MatMul
without zero points (§8).  Everything is computed in int64, so the reference cannot overflow where the C code
(int32 accumulators, 64-bit requantisation) would not.
"""

from __future__ import annotations

import numpy as np


def _along_axis_1(parameter: np.ndarray, rank: int) -> np.ndarray:
    """A scalar or per-channel requantisation parameter broadcast along axis 1 (§1.3), not numpy's last axis."""
    values = np.asarray(parameter, np.int64).reshape(-1)
    if values.size == 1:
        return values.reshape(())
    return values.reshape((1, values.size) + (1,) * (rank - 2))


def requantise(x: np.ndarray, mul: np.ndarray, add: np.ndarray, div: int, n_levels: int, signed: bool) -> np.ndarray:
    """§2: clamp(floor((x·mul + add + 2^(s-1)) / 2^s)), s = log2(div), clamped to n_levels (signed or not)."""
    shift = int(div).bit_length() - 1
    rank = np.ndim(x)
    t = np.asarray(x, np.int64) * _along_axis_1(mul, rank) + _along_axis_1(add, rank)
    if shift > 0:
        t = t + (1 << (shift - 1))
    low, high = (-(n_levels // 2), n_levels // 2 - 1) if signed else (0, n_levels - 1)
    return np.clip(t >> shift, low, high)


def rq_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, add: np.ndarray, mul: np.ndarray, div: int,
            n_levels: int = 256, signed: bool = True, trans_a: bool = False, trans_b: bool = False,
            alpha: int = 1, beta: int = 1) -> np.ndarray:
    """§8 RQGemm(A, B, [C], add, mul): §3 Gemm (alpha·op(A)@op(B) + beta·C as integers), then §2 RequantShift."""
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    acc = alpha * ((a64.T if trans_a else a64) @ (b64.T if trans_b else b64))
    if c is not None:
        acc = acc + beta * np.asarray(c, np.int64)
    return requantise(acc, mul, add, div, n_levels, signed)


def rq_matmul(a: np.ndarray, b: np.ndarray, add: np.ndarray, mul: np.ndarray, div: int, n_levels: int = 256,
              signed: bool = True) -> np.ndarray:
    """§8 RQMatMul(A, B, add, mul): §3 integer MatMul (numpy broadcasting), then §2 RequantShift along axis 1."""
    return requantise(np.matmul(np.asarray(a, np.int64), np.asarray(b, np.int64)), mul, add, div, n_levels, signed)


def matmul_integer(a: np.ndarray, b: np.ndarray, a_zero_point: np.ndarray | None = None,
                   b_zero_point: np.ndarray | None = None) -> np.ndarray:
    """ONNX MatMulInteger: (A - a_zp) @ (B - b_zp) in int32.

    ``a_zero_point`` is a scalar or one value per row of A (``[M]`` for a matrix, ``[..., M, 1]`` in general);
    ``b_zero_point`` a scalar or one per column of B (``[N]``, ``[..., 1, N]``).  With neither it is Deeploy's
    alias of integer MatMul (§8).
    """
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    if a_zero_point is not None:
        za = np.asarray(a_zero_point, np.int64)
        a64 = a64 - (za.reshape(-1, 1) if za.ndim == 1 and za.size > 1 else za)
    if b_zero_point is not None:
        b64 = b64 - np.asarray(b_zero_point, np.int64)
    return np.matmul(a64, b64).astype(np.int32)
