"""How an output is judged: the rule ``validate`` and the output folder's self-test share.

An absolute tolerance means something only next to the size of the values it
judges: 1e-4 accepts a sign-flipped golden whose values are around 1e-6 and
rejects float32 rounding noise on values around 1e6.  So a float output is
judged, by default, relative to its reference's scale: the largest error may
be at most ``SCALE_TOLERANCE`` times the reference's max ``|value|``, and the
cosine similarity of the two must be at least ``MIN_COSINE`` (the error bound
alone accepts a result whose small values are all wrong when one value
dominates; the cosine alone accepts a result scaled by 2).  Both are
independent of units, so the same defaults hold from 1e-6 to 1e6.

A reference whose max ``|value|`` is zero or subnormal has no scale to judge
by: such an output fails as "too small to judge" instead of passing whatever
was computed.  Whoever knows what error their outputs may have gives an
absolute tolerance (``atol``, and ``rtol`` per element) instead; that rule
then applies to every float output.  Integer outputs are compared exactly,
quantised outputs in quantisation steps when ``lsb_tolerance`` is set.

The defaults were set from Deeploy's float peer networks on generic-c and on
the tiled cluster: their worst error is 1.7e-6 of the output's scale and
their cosine never below 1 - 3e-13.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

SCALE_TOLERANCE = 1e-4
"""Default bound on max |result - reference| / max |reference| for float outputs."""

MIN_COSINE = 0.9999
"""Default lower bound on the cosine similarity of a float output with its reference."""

LSB_SLACK = 1e-3
"""Steps added to ``lsb_tolerance``: float32 dequantisation blurs a step by a few ulps."""

ABSOLUTE_SCALE_FACTOR = 10.0
"""With an explicit ``atol``, a reference whose max |value| is below this many times ``atol`` gets a warning."""

RuleKind = Literal["scale", "absolute", "exact", "lsb"]


@dataclass(frozen=True)
class Tolerance:
    """What the user asked for; :func:`rule_for` turns it into one output's rule.

    ``atol``/``rtol`` left at None means "judge float outputs by scale";
    giving either one (the other counts as 0) asks for the element-wise
    absolute rule ``|a - e| <= atol + rtol * |e|``.
    """

    atol: float | None = None
    rtol: float | None = None
    lsb_tolerance: float | None = None
    scale_tolerance: float = SCALE_TOLERANCE
    min_cosine: float = MIN_COSINE

    @property
    def explicit(self) -> bool:
        """Whether an absolute tolerance was given (element-wise rule)."""
        return self.atol is not None or self.rtol is not None


@dataclass(frozen=True)
class Rule:
    """How one output is judged.

    ``scale``: every ``|a - e| <= bound * max|e|``, cosine ``>= min_cosine``
    and ``max|e| >= smallest_scale``; otherwise element-wise
    ``|a - e| <= bound + relative * |e|``.  NaN equals NaN and an infinity
    equals itself under every rule; any other non-finite value on either side
    is a mismatch.
    """

    kind: RuleKind
    bound: float
    relative: float = 0.0
    min_cosine: float = MIN_COSINE
    smallest_scale: float = 0.0
    steps: float = 0.0
    """The ``lsb_tolerance`` an ``lsb`` rule's bound comes from."""

    def describe(self) -> str:
        """The rule in a few words, for tables and messages."""
        if self.kind == "scale":
            return f"rel <= {self.bound:g}, cosine >= {self.min_cosine:g}"
        if self.kind == "exact":
            return "exact"
        if self.kind == "lsb":
            return f"<= {self.steps:g} LSB"
        return f"|error| <= {self.bound:g}" + (f" + {self.relative:g} x |ref|" if self.relative else "")


def is_integer_type(dtype: np.dtype | str) -> bool:
    """Integer and boolean outputs are judged exactly; floats by scale."""
    kind = np.dtype(dtype)
    return bool(np.issubdtype(kind, np.integer) or kind == np.bool_)


def smallest_scale(dtype: np.dtype | str) -> float:
    """The smallest normal number of a float output's type (float32 for anything else): below it, rounding is no
    longer relative (subnormals, flush-to-zero), so no error relative to scale means anything."""
    kind = np.dtype(dtype)
    return float(np.finfo(kind if np.issubdtype(kind, np.floating) else np.float32).tiny)


def rule_for(tolerance: Tolerance, dtype: np.dtype | str, step: float | None) -> Rule:
    """The rule for one output of element type ``dtype`` with quantisation step ``step`` (None: plain float)."""
    if step is not None and tolerance.lsb_tolerance is not None:
        return Rule("lsb", (tolerance.lsb_tolerance + LSB_SLACK) * step, steps=tolerance.lsb_tolerance)
    if tolerance.explicit:
        return Rule("absolute", tolerance.atol or 0.0, tolerance.rtol or 0.0)
    if is_integer_type(dtype):
        return Rule("exact", 0.0)
    return Rule("scale", tolerance.scale_tolerance, 0.0, tolerance.min_cosine, smallest_scale(dtype))
