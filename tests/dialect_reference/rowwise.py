"""numpy references for Deeploy's row-wise integer ops, written from ``deeploy-op-semantics.md`` alone.

One function per op, each reducing over the last axis of an integer array and
returning the raw-domain result in the type the compiler gives the output.
They are plain functions (no test code) so that tests of whole dialect
networks (ViT/CCT blocks, an RMSNorm decoder) can chain them.  Everything is
computed in int64 with explicit truncating division (``c_div``) and floor
shifts, exactly as the document writes it (§1.4).
"""

from __future__ import annotations

import math

import numpy as np

from tests.dialect_reference.basic import c_div


def isqrt(values: np.ndarray) -> np.ndarray:
    """floor(sqrt(v)) elementwise, exact for every non-negative int64 (Python's math.isqrt, no floating point)."""
    flat = np.asarray(values, dtype=np.int64).reshape(-1)
    return np.array([math.isqrt(int(v)) for v in flat], dtype=np.int64).reshape(np.shape(values))


def wrap8(values: np.ndarray) -> np.ndarray:
    """A C cast to int8 without saturation: ((v + 128) mod 256) - 128 (§1.4)."""
    return (((np.asarray(values, dtype=np.int64) + 128) % 256) - 128).astype(np.int8)


def _exponents(peak: np.ndarray | int, x: np.ndarray) -> np.ndarray:
    """round((peak - x) / 32), half up: ITA's base-2 exponent of each element (§4.2)."""
    return (peak - x + 16) >> 5


def ita_max(x: np.ndarray, n_levels: int = 256) -> np.ndarray:
    """ITAMax (§4.2): y = floor((n_levels-1)·256 / Σ(256 >> e)) >> e with e = round((max - x)/32); uint8 out."""
    data = np.asarray(x, dtype=np.int64)
    peak = data.max(axis=-1, keepdims=True)
    exponents = _exponents(peak, data)
    total = (256 >> exponents).sum(axis=-1, keepdims=True)
    inverse = ((n_levels - 1) * 256) // total
    return (inverse >> exponents).astype(np.uint8 if n_levels <= 256 else np.uint16)


def ita_partial_max(x: np.ndarray, group_width: int, n_levels: int = 256) -> np.ndarray:
    """ITAPartialMax (§4.3): ITAMax streamed over column groups, the running sum rescaled when the maximum rises.

    The running maximum starts at -128; a group whose maximum exceeds it shifts
    the sum so far right by round((new - old)/32).  The output scales to
    n_levels/2 - 1 (127 for 256 levels).
    """
    data = np.asarray(x, dtype=np.int64)
    length = data.shape[-1]
    if length % group_width:
        raise ValueError(f"group_width {group_width} does not divide the last axis ({length})")
    rows = data.reshape(-1, length)
    out = np.empty_like(rows)
    for index, row in enumerate(rows):
        peak, partial = -128, 0
        for start in range(0, length, group_width):
            group = row[start:start + group_width]
            group_peak = max(-128, int(group.max()))
            rescale = 0
            if group_peak > peak:
                rescale = (group_peak - peak + 16) >> 5
                peak = group_peak
            partial = (partial >> rescale) + int((256 >> _exponents(peak, group)).sum())
        inverse = ((n_levels // 2 - 1) * 256) // partial
        out[index] = inverse >> _exponents(peak, row)
    return out.reshape(data.shape).astype(np.uint8 if n_levels <= 256 else np.uint16)


def i_layer_norm_before_cast(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, d: int) -> np.ndarray:
    """iLayerNorm (§4.4) up to the final cast: (c_div((x - mean)·w, isqrt(var)) + b) >> log2 D, in int64.

    mean = c_div(Σx, L) and var = c_div(Σ(x - mean)², L) + 1 (the +1 is essential per the document).
    """
    data = np.asarray(x, dtype=np.int64)
    length = data.shape[-1]
    shift = int(d).bit_length() - 1
    mean = c_div(data.sum(axis=-1, keepdims=True), length)
    centred = data - mean
    variance = c_div((centred * centred).sum(axis=-1, keepdims=True), length) + 1
    root = isqrt(variance)
    return (c_div(centred * np.asarray(weight, np.int64), root) + np.asarray(bias, np.int64)) >> shift


def i_layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, d: int) -> np.ndarray:
    """iLayerNorm (§4.4): :func:`i_layer_norm_before_cast` wrapped to int8 (Deeploy's cast does not saturate)."""
    return wrap8(i_layer_norm_before_cast(x, weight, bias, d))


def i_rms_norm_before_clamp(x: np.ndarray, weight: np.ndarray, d: int) -> np.ndarray:
    """iRMSNorm (§8, unverified in the document) up to the clamp: c_div(x·w, isqrt(c_div(Σx², L) + 1)) >> log2 D."""
    data = np.asarray(x, dtype=np.int64)
    length = data.shape[-1]
    shift = int(d).bit_length() - 1
    root = isqrt(c_div((data * data).sum(axis=-1, keepdims=True), length) + 1)
    return c_div(data * np.asarray(weight, np.int64), root) >> shift


def i_rms_norm(x: np.ndarray, weight: np.ndarray, d: int) -> np.ndarray:
    """iRMSNorm (§8): :func:`i_rms_norm_before_clamp` saturated to [-128, 127]."""
    return np.clip(i_rms_norm_before_clamp(x, weight, d), -128, 127).astype(np.int8)


def i_softmax(x: np.ndarray, coeff_a: int, coeff_b: int, coeff_c: int, log2: int, n_levels: int = 256) -> np.ndarray:
    """iSoftmax (§4.1): I-BERT's second-order exp per row, e = (A·(p + B)² + C) >> z, then e·(n − 1) / Σe.

    z = min(floor(−d / log2), 31) with d = x − max(row) ≤ 0 and p = d + z·log2; e in 64 bits kept as uint32,
    the sum and the final quotient in unsigned 32-bit arithmetic.
    """
    data = np.asarray(x, dtype=np.int64)
    d = data - data.max(axis=-1, keepdims=True)
    z = np.minimum((-d) // log2, 31)
    p = d + z * log2
    e = ((coeff_a * (p + coeff_b) ** 2 + coeff_c) >> z).astype(np.uint64) & 0xFFFFFFFF
    total = e.sum(axis=-1, keepdims=True) & 0xFFFFFFFF
    return ((e * (n_levels - 1)) & 0xFFFFFFFF) // total
