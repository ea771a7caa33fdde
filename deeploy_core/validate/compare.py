"""Comparing outputs: per output max abs error, cosine similarity and a pass/fail verdict."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OutputComparison:
    """How one output compares with its reference (arrays compared flattened)."""

    name: str
    max_abs_error: float
    cosine: float
    mismatches: int
    size: int
    step: float | None = None

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    @property
    def max_lsb_error(self) -> float | None:
        """The largest error in quantisation steps, for quantised outputs."""
        return self.max_abs_error / self.step if self.step else None


def compare_output(
    name: str, actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
    step: float | None = None, lsb_tolerance: float | None = None,
) -> OutputComparison:
    """Element-wise ``|a - e| <= atol + rtol * |e|`` (NaN equals NaN) over the flattened arrays.

    With a quantisation ``step`` and an ``lsb_tolerance``, the bound is
    ``lsb_tolerance`` steps instead (fixed-point results are judged in LSB).
    """
    got = np.asarray(actual).reshape(-1).astype(np.float64)
    want = np.asarray(expected).reshape(-1).astype(np.float64)
    if got.size != want.size:
        return OutputComparison(name, float("inf"), 0.0, max(got.size, want.size), want.size, step)
    both_nan = np.isnan(got) & np.isnan(want)
    difference = np.where(both_nan, 0.0, np.abs(got - want))
    difference = np.where(np.isnan(difference), np.inf, difference)
    if step is not None and lsb_tolerance is not None:
        bad = difference > (lsb_tolerance + 1e-3) * step  # float32 dequantisation blurs the step
    else:
        bad = difference > atol + rtol * np.abs(np.nan_to_num(want))
    norms = float(np.linalg.norm(np.nan_to_num(got)) * np.linalg.norm(np.nan_to_num(want)))
    cosine = float(np.dot(np.nan_to_num(got), np.nan_to_num(want)) / norms) if norms > 0 else float(np.array_equal(got, want))
    return OutputComparison(name, float(difference.max(initial=0.0)), cosine, int(bad.sum()), int(want.size), step)
