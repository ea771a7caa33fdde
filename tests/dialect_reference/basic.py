"""numpy references of the plain integer ops that Deeploy's dialect networks chain between its own ops.

Written from ``deeploy-op-semantics.md`` (§2 RequantShift, §3 integer Conv/Gemm/MatMul/Add/ReduceSum/IntegerMean),
in the raw integer domain with int64 intermediates, so a network reference composed from them cannot overflow
where the C code (int32 accumulators, 64-bit requantisation) does not either.  These are the glue of the network
tests; each dialect op's own reference lives next to its op tests (``rowwise``, ``elementwise``, ``linear``).
RequantShift's reference is the installed :mod:`deeploy_core.testing.requant_reference`, which plugin tests
share.
"""

from __future__ import annotations

import numpy as np

from deeploy_core.testing.requant_reference import along_axis_1, requant_bounds, requant_shift

__all__ = ["along_axis_1", "c_div", "conv2d", "gemm", "integer_mean", "matmul", "reduce_sum", "requant_bounds",
           "requant_shift"]


def c_div(numerator: np.ndarray, denominator: np.ndarray | int) -> np.ndarray:
    """C's integer division (truncation toward zero), elementwise in int64 (§1.4)."""
    num = np.asarray(numerator, dtype=np.int64)
    den = np.asarray(denominator, dtype=np.int64)
    quotient = np.abs(num) // np.abs(den)
    return np.where((num < 0) != (den < 0), -quotient, quotient)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer MatMul (numpy broadcasting of batch dimensions), exact in int64."""
    return np.matmul(np.asarray(a, np.int64), np.asarray(b, np.int64))


def gemm(a: np.ndarray, b: np.ndarray, c: np.ndarray | None = None, trans_a: bool = False, trans_b: bool = False,
         alpha: int = 1, beta: int = 1) -> np.ndarray:
    """Integer Gemm: alpha·op(A)@op(B) + beta·C, alpha and beta as integers (§3)."""
    a64, b64 = np.asarray(a, np.int64), np.asarray(b, np.int64)
    product = alpha * ((a64.T if trans_a else a64) @ (b64.T if trans_b else b64))
    return product if c is None else product + beta * np.asarray(c, np.int64)


def conv2d(x: np.ndarray, w: np.ndarray, pads: tuple[int, int, int, int] = (0, 0, 0, 0),
           strides: tuple[int, int] = (1, 1), group: int = 1) -> np.ndarray:
    """Integer 2-D convolution, NCHW/OIHW, zero padding (top, left, bottom, right), any ``group``; int64 sums."""
    x64 = np.pad(np.asarray(x, np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    w64 = np.asarray(w, np.int64)
    n, c, h, width = x64.shape
    m, cg, kh, kw = w64.shape
    oh, ow = (h - kh) // strides[0] + 1, (width - kw) // strides[1] + 1
    mg = m // group
    y = np.zeros((n, m, oh, ow), np.int64)
    for out in range(m):
        channels = x64[:, (out // mg) * cg:(out // mg + 1) * cg]
        for ky in range(kh):
            for kx in range(kw):
                window = channels[:, :, ky:ky + strides[0] * oh:strides[0], kx:kx + strides[1] * ow:strides[1]]
                y[:, out] += np.einsum("nchw,c->nhw", window, w64[out, :, ky, kx])
    return y


def reduce_sum(x: np.ndarray, axes: tuple[int, ...], keepdims: bool = True) -> np.ndarray:
    """Exact integer ReduceSum."""
    return np.asarray(x, np.int64).sum(axis=axes, keepdims=keepdims)


def integer_mean(x: np.ndarray, axes: tuple[int, ...], keepdims: bool) -> np.ndarray:
    """§3 IntegerMean: S over the axes, N elements; keepdims 0 and N = 2^k: (S + 2^(k-1)) >> k, else half away."""
    rank = np.ndim(x)
    axes = tuple(axis % rank for axis in axes)
    total = reduce_sum(x, axes, keepdims)
    count = int(np.prod([np.shape(x)[axis] for axis in axes]))
    if not keepdims and count & (count - 1) == 0:
        shift = count.bit_length() - 1
        return (total + ((1 << (shift - 1)) if shift else 0)) >> shift
    biased = total + np.where(total >= 0, count // 2, -(count // 2))
    return np.sign(biased) * (np.abs(biased) // count)
