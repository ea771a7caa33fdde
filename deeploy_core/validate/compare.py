"""Comparing outputs: per output max abs error, cosine similarity, error relative to the output's scale, verdict.

An absolute tolerance only means something next to the size of the values it
judges: a float output whose reference is all zeros, or whose largest value
is below ``SCALE_FACTOR`` times ``atol``, passes whatever the network
computes.  Such outputs are still compared as before (``|a - e| <= atol +
rtol * |e|``), but flagged ``too_small`` so that ``validate`` warns instead of
reporting a vacuous success; the error in units of the output's max
``|reference|`` and the cosine similarity say how close the result is
independently of the tolerance.  Integer and quantised outputs are judged
exactly (or in LSB) and are never flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SCALE_FACTOR = 10.0
"""A float output is too small to judge when its max |reference| is below this many times ``atol``."""


@dataclass(frozen=True)
class OutputComparison:
    """How one output compares with its reference (arrays compared flattened)."""

    name: str
    max_abs_error: float
    cosine: float
    mismatches: int
    size: int
    step: float | None = None
    scale: float = 0.0
    """The reference's max |value| (0 for an all-zero or empty reference)."""
    too_small: bool = False
    """A float reference so small that ``atol`` alone accepts nearly any result (see the module docstring)."""
    atol: float = 0.0

    @property
    def ok(self) -> bool:
        return self.mismatches == 0

    @property
    def max_lsb_error(self) -> float | None:
        """The largest error in quantisation steps, for quantised outputs."""
        return self.max_abs_error / self.step if self.step else None

    @property
    def max_relative_error(self) -> float | None:
        """The largest error in units of the reference's max |value| (None when the reference is all zeros)."""
        return self.max_abs_error / self.scale if self.scale > 0 else None

    @property
    def warning(self) -> str | None:
        """One line for the user when the output is too small for its tolerance to mean anything."""
        if not self.too_small:
            return None
        size = "all zeros" if self.scale == 0 else f"max |value| {self.scale:.3g}"
        return (f"output '{self.name}': the reference is {size}, below {SCALE_FACTOR:g} x atol ({self.atol:g}), so "
                f"the comparison passes almost any result; judge it by cosine and relative error, lower --atol, "
                f"or use inputs/weights that give larger outputs")


def compare_output(
    name: str, actual: np.ndarray, expected: np.ndarray, atol: float, rtol: float,
    step: float | None = None, lsb_tolerance: float | None = None,
) -> OutputComparison:
    """Element-wise ``|a - e| <= atol + rtol * |e|`` (NaN equals NaN) over the flattened arrays.

    With a quantisation ``step`` and an ``lsb_tolerance``, the bound is
    ``lsb_tolerance`` steps instead (fixed-point results are judged in LSB).
    """
    raw_want = np.asarray(expected)
    got = np.asarray(actual).reshape(-1).astype(np.float64)
    want = raw_want.reshape(-1).astype(np.float64)
    if got.size != want.size:
        return OutputComparison(name, float("inf"), 0.0, max(got.size, want.size), want.size, step, atol=atol)
    both_nan = np.isnan(got) & np.isnan(want)
    difference = np.where(both_nan, 0.0, np.abs(got - want))
    difference = np.where(np.isnan(difference), np.inf, difference)
    judged_in_lsb = step is not None and lsb_tolerance is not None
    if judged_in_lsb:
        assert step is not None and lsb_tolerance is not None
        bad = difference > (lsb_tolerance + 1e-3) * step  # float32 dequantisation blurs the step
    else:
        bad = difference > atol + rtol * np.abs(np.nan_to_num(want))
    norms = float(np.linalg.norm(np.nan_to_num(got)) * np.linalg.norm(np.nan_to_num(want)))
    cosine = float(np.dot(np.nan_to_num(got), np.nan_to_num(want)) / norms) if norms > 0 else float(np.array_equal(got, want))
    finite = np.abs(want[np.isfinite(want)])
    scale = float(finite.max(initial=0.0))
    is_float = np.issubdtype(raw_want.dtype, np.floating)
    too_small = bool(is_float and step is None and not judged_in_lsb and want.size > 0 and
                     (scale == 0.0 or scale < SCALE_FACTOR * atol))
    return OutputComparison(name, float(difference.max(initial=0.0)), cosine, int(bad.sum()), int(want.size), step,
                            scale, too_small, atol)
