"""Comparing outputs: per output max abs error, cosine similarity, error relative to the output's scale, verdict.

The rule comes from :mod:`deeploy_core.tolerance` (float outputs by
scale and cosine unless an absolute tolerance is given, integers exactly,
quantised outputs in steps); the output folder's self-test
(:mod:`deeploy_core.codegen.self_test`) computes the same measures in C and
must reach the same verdict, so a change here is a change there.  Every
measure is reported whatever the rule, so that a user who gives ``--atol``
still sees how the result compares in units of the output's scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deeploy_core.tolerance import (
    ABSOLUTE_SCALE_FACTOR, MIN_COSINE, SCALE_TOLERANCE, Rule, Tolerance, is_integer_type, rule_for,
)

SCALE_FACTOR = ABSOLUTE_SCALE_FACTOR
"""With an explicit ``atol``, a reference whose max |value| is below this many times ``atol`` is flagged."""


@dataclass(frozen=True)
class OutputComparison:
    """How one output compares with its reference (arrays compared flattened)."""

    name: str
    max_abs_error: float
    cosine: float
    mismatches: int
    """Elements outside the rule's per-element bound, non-finite mismatches included."""
    size: int
    step: float | None = None
    scale: float = 0.0
    """The reference's max |finite value| (0 for an all-zero or empty reference)."""
    too_small: bool = False
    """The reference is too small for the rule: a failure under the scale rule (no scale to judge by), a warning
    under an explicit absolute tolerance (below ``SCALE_FACTOR`` x ``atol``, which accepts nearly any result)."""
    atol: float = 0.0
    rule: Rule = Rule("absolute", 0.0)
    non_finite: int = 0
    """Elements NaN or infinite on one side and not the same on the other."""
    actual_size: int | None = None
    """The number of values computed, when it differs from the reference's."""

    @property
    def ok(self) -> bool:
        if self.actual_size is not None or self.mismatches:
            return False
        if self.rule.kind == "scale":
            return not self.too_small and self.cosine >= self.rule.min_cosine
        return True

    @property
    def max_lsb_error(self) -> float | None:
        """The largest error in quantisation steps, for quantised outputs."""
        return self.max_abs_error / self.step if self.step else None

    @property
    def max_relative_error(self) -> float | None:
        """The largest error in units of the reference's max |value| (None when the reference is all zeros)."""
        return self.max_abs_error / self.scale if self.scale > 0 else None

    @property
    def status(self) -> str:
        """One word or two for a table: ok, MISMATCH or TOO SMALL TO JUDGE."""
        if self.rule.kind == "scale" and self.too_small and self.actual_size is None:
            return "TOO SMALL TO JUDGE"
        return "ok" if self.ok else "MISMATCH"

    @property
    def failure(self) -> str | None:
        """Why the output fails, in one line (None when it passes)."""
        if self.ok:
            return None
        head = f"output '{self.name}'"
        if self.actual_size is not None:
            return f"{head}: the network computes {self.actual_size} values, the reference has {self.size}"
        if self.rule.kind == "scale" and self.too_small:
            size = "all zeros" if self.scale == 0 else f"at most {self.scale:.3g} in magnitude (subnormal)"
            return (f"{head}: the reference is {size}, too small to judge by relative error and cosine; "
                    f"give --atol to judge it by absolute error, or use inputs/weights that give larger outputs")
        reasons = []
        if self.non_finite:
            reasons.append(f"{self.non_finite}/{self.size} values NaN or infinite where the reference is not "
                           f"(or the reverse)")
        if self.rule.kind == "scale":
            relative = self.max_relative_error
            if self.mismatches > self.non_finite and relative is not None:
                reasons.append(f"max error {relative:.3g} x max |reference| ({self.scale:.3g}), above "
                               f"{self.rule.bound:g} ({self.mismatches - self.non_finite}/{self.size} values)")
            if self.cosine < self.rule.min_cosine:
                reasons.append(f"cosine similarity {self.cosine:.6f}, below {self.rule.min_cosine:g}")
        elif self.mismatches > self.non_finite:
            bad = self.mismatches - self.non_finite
            if self.rule.kind == "lsb":
                lsb = self.max_lsb_error
                reasons.append(f"{bad}/{self.size} values more than {self.rule.steps:g} LSB off "
                               f"(max {'-' if lsb is None else f'{lsb:.3g}'} LSB)")
            elif self.rule.kind == "exact":
                reasons.append(f"{bad}/{self.size} integer values differ (max abs error {self.max_abs_error:.3g}; "
                               f"integer outputs must match exactly unless --atol or --lsb-tolerance is given)")
            else:
                reasons.append(f"{bad}/{self.size} values outside {self.rule.describe()} "
                               f"(max abs error {self.max_abs_error:.3g})")
        return f"{head}: " + "; ".join(reasons)

    @property
    def warning(self) -> str | None:
        """One line for the user when an explicit absolute tolerance is too large for the output to mean anything."""
        if not self.too_small or self.rule.kind != "absolute":
            return None
        size = "all zeros" if self.scale == 0 else f"at most {self.scale:.3g} in magnitude"
        return (f"output '{self.name}': the reference is {size}, below {SCALE_FACTOR:g} x atol ({self.atol:g}), so "
                f"the comparison passes almost any result; judge it by cosine and relative error (leave out "
                f"--atol), lower --atol, or use inputs/weights that give larger outputs")


def judge_output(name: str, actual: np.ndarray, expected: np.ndarray, rule: Rule,
                 step: float | None = None) -> OutputComparison:
    """``actual`` against ``expected`` (flattened) under ``rule``, with every measure reported."""
    got = np.asarray(actual).reshape(-1).astype(np.float64)
    want = np.asarray(expected).reshape(-1).astype(np.float64)
    atol = rule.bound if rule.kind == "absolute" else 0.0
    if got.size != want.size:
        return OutputComparison(name, float("inf"), 0.0, want.size, want.size, step, atol=atol, rule=rule,
                                actual_size=got.size)
    finite = np.isfinite(got) & np.isfinite(want)
    same = (np.isnan(got) & np.isnan(want)) | (got == want)  # NaN equals NaN, an infinity itself
    non_finite = ~finite & ~same
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.where(finite, np.abs(got - want), 0.0)
    difference = np.where(non_finite, np.inf, difference)
    scale = float(np.abs(want[np.isfinite(want)]).max(initial=0.0))
    if rule.kind == "scale":
        limit: np.ndarray | float = rule.bound * scale
    else:
        limit = rule.bound + rule.relative * np.abs(np.where(np.isfinite(want), want, 0.0))
    bad = (difference > limit) | non_finite
    if rule.kind == "scale":
        too_small = want.size > 0 and (scale < rule.smallest_scale or scale == 0.0)
    else:  # an integer output's tolerance counts whole units, meaningful at any size: never flagged
        too_small = (rule.kind == "absolute" and want.size > 0 and scale < SCALE_FACTOR * rule.bound
                     and not is_integer_type(np.asarray(actual).dtype))
    return OutputComparison(name, float(difference.max(initial=0.0)), _cosine(got[finite], want[finite], scale),
                            int(bad.sum()), int(want.size), step, scale, bool(too_small), atol, rule,
                            int(non_finite.sum()))


def _cosine(got: np.ndarray, want: np.ndarray, scale: float) -> float:
    """Cosine similarity over the finite pairs, both sides divided by ``scale`` first (no overflow in the squares
    of float64 outputs); 1 when both are zero vectors, 0 when only one is."""
    if scale > 0:
        got, want = got / scale, want / scale
    norms = float(np.sqrt(np.dot(got, got)) * np.sqrt(np.dot(want, want)))
    if norms > 0:
        return float(np.dot(got, want) / norms)
    return float(not got.any() and not want.any())


def compare_output(
    name: str, actual: np.ndarray, expected: np.ndarray, atol: float | None = None, rtol: float | None = None,
    step: float | None = None, lsb_tolerance: float | None = None, *, scale_tolerance: float = SCALE_TOLERANCE,
    min_cosine: float = MIN_COSINE,
) -> OutputComparison:
    """One output under the rule of :func:`deeploy_core.tolerance.rule_for` for ``actual``'s type.

    ``atol``/``rtol`` None (the default): float outputs by scale and cosine;
    either given: element-wise ``|a - e| <= atol + rtol * |e|``.  With a
    quantisation ``step`` and an ``lsb_tolerance``, ``lsb_tolerance`` steps.
    """
    tolerance = Tolerance(atol, rtol, lsb_tolerance, scale_tolerance, min_cosine)
    return judge_output(name, actual, expected, rule_for(tolerance, np.asarray(actual).dtype, step), step)
