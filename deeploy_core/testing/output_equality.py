"""When two builds of one network computed the same thing, and when a build computed the expected thing.

Two builds of the same generated C (another compiler, other flags, another
core) must agree with each other far more tightly than with a reference:

* integer outputs bit for bit: integer arithmetic has one right answer, so a
  single differing byte is a miscompilation (or code that relies on undefined
  behaviour the optimiser exploits);
* float outputs within ``FLOAT_RELATIVE`` of the largest magnitude of the
  baseline output (``max|a - b| <= 1e-6 * max|b|``): C99 with ``-std=c99``
  forbids contracting ``a*b + c`` into an FMA, and no kernel sums in an order
  the optimiser may change, so builds differ only where the C library's
  ``expf``/``tanhf`` do (glibc on the host, newlib on a microcontroller).

Against the goldens (a peer test's outputs, ONNX Runtime, a numpy reference)
the comparison is the validation's own (:func:`deeploy_core.validate.compare.compare_output`),
with the tolerance the case names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from deeploy_core.ir.tensor_spec import TensorSpec
from deeploy_core.validate.compare import compare_output

FLOAT_RELATIVE = 1e-6
"""A float output of one build may differ from the baseline's by this fraction of the baseline's max |value|."""


def decode(raw: Sequence[bytes], specs: Sequence[TensorSpec]) -> list[np.ndarray]:
    """The outputs' bytes as arrays of the types and shapes the network declares (one spec per output)."""
    if len(raw) != len(specs):
        raise ValueError(f"{len(raw)} outputs printed, the network has {len(specs)}")
    arrays = []
    for data, spec in zip(raw, specs):
        dtype = np.dtype(spec.dtype)
        count = int(np.prod(spec.shape, dtype=np.int64))
        if len(data) != count * dtype.itemsize:
            raise ValueError(f"output {spec.name!r}: {len(data)} bytes, {spec.dtype}{list(spec.shape)} needs "
                             f"{count * dtype.itemsize}")
        arrays.append(np.frombuffer(data, dtype=dtype, count=count).reshape(spec.shape).copy())
    return arrays


def build_differences(actual: Sequence[bytes], baseline: Sequence[bytes], specs: Sequence[TensorSpec]) -> list[str]:
    """One line per output where ``actual`` and ``baseline`` (raw bytes of two builds) disagree; empty: the same."""
    lines = []
    for got, want, spec in zip(decode(actual, specs), decode(baseline, specs), specs):
        if np.issubdtype(got.dtype, np.floating):
            line = _float_difference(spec.name, got, want)
        else:
            line = _integer_difference(spec.name, got, want)
        if line is not None:
            lines.append(line)
    return lines


def _integer_difference(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    differing = np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    if differing.size == 0:
        return None
    first = int(differing[0])
    return (f"{name}: {differing.size}/{got.size} elements differ (first at {first}: "
            f"{got.reshape(-1)[first]} vs {want.reshape(-1)[first]})")


def _float_difference(name: str, got: np.ndarray, want: np.ndarray) -> str | None:
    a, b = got.reshape(-1).astype(np.float64), want.reshape(-1).astype(np.float64)
    same_nan = np.isnan(a) & np.isnan(b)
    error = np.where(same_nan, 0.0, np.abs(a - b))
    error = np.where(np.isnan(error), np.inf, error)  # NaN on one side only
    finite = np.abs(b[np.isfinite(b)])
    bound = FLOAT_RELATIVE * float(finite.max(initial=0.0))
    worst = float(error.max(initial=0.0))
    if worst <= bound:
        return None
    return (f"{name}: max |difference| {worst:.3g} > {FLOAT_RELATIVE:g} x max|baseline| = {bound:.3g} "
            f"({int((error > bound).sum())}/{a.size} elements)")


@dataclass(frozen=True)
class Golden:
    """The outputs a network must compute and how closely: ``atol + rtol·|expected|``, or ``lsb`` quantisation
    steps for quantised outputs; ``judged`` limits the check to some outputs by name (None: all)."""

    expected: tuple[np.ndarray, ...]
    atol: float = 0.0
    rtol: float = 0.0
    lsb: float | None = None
    judged: frozenset[str] | None = None


def golden_differences(actual: Sequence[bytes], specs: Sequence[TensorSpec], golden: Golden) -> list[str]:
    """One line per judged output of a build that misses the golden (empty: every judged output matches)."""
    if len(golden.expected) < len(specs):
        raise ValueError(f"{len(golden.expected)} golden outputs for {len(specs)} network outputs")
    lines = []
    for got, want, spec in zip(decode(actual, specs), golden.expected, specs):
        if golden.judged is not None and spec.name not in golden.judged:
            continue
        comparison = compare_output(spec.name, got, want, golden.atol, golden.rtol, spec.step, golden.lsb)
        if not comparison.ok:
            lines.append(f"{spec.name}: {comparison.mismatches}/{comparison.size} elements off the golden "
                         f"(max abs error {comparison.max_abs_error:.3g})")
    return lines
