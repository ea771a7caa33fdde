"""numpy's RequantShift (Deeploy's dialect, ``deeploy-op-semantics.md`` §2): the expected side of integer kernel tests.

Every platform that maps Deeploy's integer ops (generic-c's kernels, a plugin's own) needs the same reference
for the requantisation epilogue: multiplier, offset, rounding shift, saturation to ``n_levels``.  Written from
the semantics document in the raw integer domain with int64 intermediates, independently of any kernel or
lowering, so a test that compares generated C with it checks the kernel rather than agreeing with it by
construction.  The core's dialect tests and generic-c's kernel tests share it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["along_axis_1", "requant_bounds", "requant_shift"]


def along_axis_1(parameter: np.ndarray, rank: int) -> np.ndarray:
    """A scalar or per-channel parameter shaped to broadcast along axis 1 of a rank-``rank`` tensor.

    Deeploy applies a 1-D ``mul``/``add`` of length C along axis 1 (§1.3), where numpy would use the last axis;
    reshaping makes numpy agree with that rule.
    """
    values = np.asarray(parameter, dtype=np.int64).reshape(-1)
    if values.size == 1 or rank < 2:
        return values.reshape(()) if values.size == 1 else values
    return values.reshape((1, values.size) + (1,) * (rank - 2))


def requant_bounds(n_levels: int, signed: bool) -> tuple[int, int]:
    """The output range an ``n_levels``/``signed`` pair allows (§1.2): never the C type's."""
    return (-(n_levels // 2), n_levels // 2 - 1) if signed else (0, n_levels - 1)


def requant_shift(x: np.ndarray, mul: np.ndarray, add: np.ndarray, div: int, n_levels: int = 256,
                  signed: bool = True) -> np.ndarray:
    """§2: clamp(floor((x·mul + add + 2^(s-1)) / 2^s)) with s = log2(div); round half up, then saturate.

    >>> requant_shift(np.array([[10, -10]]), np.array([3]), np.array([1]), 4).tolist()
    [[8, -7]]
    """
    shift = int(div).bit_length() - 1
    rank = np.ndim(x)
    t = np.asarray(x, np.int64) * along_axis_1(mul, rank) + along_axis_1(add, rank)
    if shift > 0:
        t = t + (1 << (shift - 1))
    low, high = requant_bounds(n_levels, signed)
    return np.clip(t >> shift, low, high)
