"""numpy's RequantShift (Deeploy's dialect, ``deeploy-op-semantics.md`` §2), the expected side of the integer kernel tests.

Written from the semantics document in the raw integer domain with int64 intermediates, independently of the
plugin's kernels and lowering, so a test that compares the generated C with it checks the kernel's epilogue
(multiplier, offset, rounding shift, saturation) rather than agreeing with it by construction.
"""

from __future__ import annotations

import numpy as np


def along_axis_1(parameter: np.ndarray, rank: int) -> np.ndarray:
    """A scalar or per-channel parameter shaped to broadcast along axis 1 of a rank-``rank`` tensor (§1.3)."""
    values = np.asarray(parameter, dtype=np.int64).reshape(-1)
    if values.size == 1 or rank < 2:
        return values.reshape(()) if values.size == 1 else values
    return values.reshape((1, values.size) + (1,) * (rank - 2))


def requant_bounds(n_levels: int, signed: bool) -> tuple[int, int]:
    """The output range an ``n_levels``/``signed`` pair allows (§1.2): never the C type's."""
    return (-(n_levels // 2), n_levels // 2 - 1) if signed else (0, n_levels - 1)


def requant_shift(x: np.ndarray, mul: np.ndarray, add: np.ndarray, div: int, n_levels: int = 256,
                  signed: bool = True) -> np.ndarray:
    """§2: clamp(floor((x·mul + add + 2^(s-1)) / 2^s)) with s = log2(div); round half up, then saturate."""
    shift = int(div).bit_length() - 1
    rank = np.ndim(x)
    t = np.asarray(x, np.int64) * along_axis_1(mul, rank) + along_axis_1(add, rank)
    if shift > 0:
        t = t + (1 << (shift - 1))
    low, high = requant_bounds(n_levels, signed)
    return np.clip(t >> shift, low, high)
