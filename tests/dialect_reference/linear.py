"""numpy references of the linear ops of Deeploy's dialect: RQGemm, RQMatMul, RequantizedConv and MatMulInteger.

Written from ``deeploy-op-semantics.md``: §8 makes RQGemm/RQMatMul/RequantizedConv the unfused integer
Gemm/MatMul/Conv (§3) followed by RequantShift (§2), composed here from :mod:`.basic`.  MatMulInteger is ONNX's
operator (``(A - a_zero_point) @ (B - b_zero_point)`` in int32, zero points per tensor, per row of A or per column
of B), which Deeploy's Generic platform maps as integer MatMul without zero points (§8).  Everything is computed in
int64, so the reference cannot overflow where the C code (int32 accumulators, 64-bit requantisation) would not.
"""

from __future__ import annotations

import numpy as np

from tests.dialect_reference.basic import conv2d, gemm, matmul, requant_shift


def rq_gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None, add: np.ndarray, mul: np.ndarray, div: int,
            n_levels: int = 256, signed: bool = True, trans_a: bool = False, trans_b: bool = False,
            alpha: int = 1, beta: int = 1) -> np.ndarray:
    """§8 RQGemm(A, B, [C], add, mul): §3 Gemm (alpha·op(A)@op(B) + beta·C as integers), then §2 RequantShift."""
    return requant_shift(gemm(a, b, c, trans_a, trans_b, alpha, beta), mul, add, div, n_levels, signed)


def rq_matmul(a: np.ndarray, b: np.ndarray, add: np.ndarray, mul: np.ndarray, div: int, n_levels: int = 256,
              signed: bool = True) -> np.ndarray:
    """§8 RQMatMul(A, B, add, mul): §3 integer MatMul (numpy broadcasting), then §2 RequantShift along axis 1."""
    return requant_shift(matmul(a, b), mul, add, div, n_levels, signed)


def requantized_conv(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None, mul: np.ndarray, add: np.ndarray, div: int,
                     pads: tuple[int, int, int, int] = (0, 0, 0, 0), strides: tuple[int, int] = (1, 1), group: int = 1,
                     n_levels: int = 256, signed: bool = True) -> np.ndarray:
    """§8 RequantizedConv(x, w, [bias], mul, add): §3 integer Conv plus the bias per output channel, then §2."""
    acc = conv2d(x, w, pads, strides, group)
    if bias is not None:
        acc = acc + np.asarray(bias, np.int64).reshape(1, -1, 1, 1)
    return requant_shift(acc, mul, add, div, n_levels, signed)


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
