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

    @property
    def ok(self) -> bool:
        return self.mismatches == 0


def compare_output(name: str, actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float) -> OutputComparison:
    """Element-wise ``|a - e| <= atol + rtol * |e|`` (NaN equals NaN) over the flattened arrays."""
    got = np.asarray(actual).reshape(-1).astype(np.float64)
    want = np.asarray(expected).reshape(-1).astype(np.float64)
    if got.size != want.size:
        return OutputComparison(name, float("inf"), 0.0, max(got.size, want.size), want.size)
    both_nan = np.isnan(got) & np.isnan(want)
    difference = np.where(both_nan, 0.0, np.abs(got - want))
    difference = np.where(np.isnan(difference), np.inf, difference)
    bad = difference > atol + rtol * np.abs(np.nan_to_num(want))
    norms = float(np.linalg.norm(np.nan_to_num(got)) * np.linalg.norm(np.nan_to_num(want)))
    cosine = float(np.dot(np.nan_to_num(got), np.nan_to_num(want)) / norms) if norms > 0 else float(np.array_equal(got, want))
    return OutputComparison(name, float(difference.max(initial=0.0)), cosine, int(bad.sum()), int(want.size))
