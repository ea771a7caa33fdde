"""Validating one case against ONNX Runtime and judging it by its bound.

Float outputs of random-weight networks range from 1e-2 to 1e1, so a fixed
absolute tolerance would be either vacuous or too strict; they are judged by
the error relative to the output's max ``|value|`` (what ``validate``
prints as "max rel error"), and an all-zero reference fails outright instead
of passing whatever the code computes.  Quantised outputs are judged in
quantisation steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import OutputComparison
from tests.models.cases import Case


@dataclass(frozen=True)
class Outcome:
    """How a case's outputs compare with ONNX Runtime's, and whether that meets its bound."""

    comparisons: tuple[OutputComparison, ...]
    ok: bool

    @property
    def relative_error(self) -> float | None:
        """The worst output's error in units of its max |reference| (None when a reference is all zeros)."""
        errors = [comparison.max_relative_error for comparison in self.comparisons]
        return None if any(error is None for error in errors) else max(e for e in errors if e is not None)

    @property
    def lsb_error(self) -> float | None:
        errors = [comparison.max_lsb_error for comparison in self.comparisons if comparison.max_lsb_error is not None]
        return max(errors) if errors else None

    def describe(self) -> str:
        """Per output: scale, errors and cosine (and, for quantised outputs, how many values miss the bound)."""
        return "; ".join(
            f"{c.name}: max |ref| {c.scale:.3g}, max abs error {c.max_abs_error:.3g}, "
            f"rel {'-' if c.max_relative_error is None else f'{c.max_relative_error:.3g}'}, "
            f"LSB {'-' if c.max_lsb_error is None else f'{c.max_lsb_error:g}'}, cosine {c.cosine:.6f}"
            + ("" if c.step is None else f", {c.mismatches}/{c.size} outside the bound") for c in self.comparisons)


def validate_case(case: Case, host: PluginHost, runtime_cache: Path | None = None) -> Outcome:
    """Compile, build, run on seeded random inputs, compare with ONNX Runtime; raises DeeployError if refused."""
    bound = case.bound()
    options = CompileOptions(platform=case.platform, quantization=case.quantization or "exact",
                             level_sizes={"L2": case.l2} if case.l2 else {})
    _, result = validate_model(case.path(), options, host, atol=0.0, repeats=1, cache_dir=runtime_cache,
                               lsb_tolerance=bound.lsb if bound.lsb else None)
    comparisons = tuple(result.comparisons)
    if bound.relative is not None:
        relative = [comparison.max_relative_error for comparison in comparisons]
        ok = all(error is not None and error <= bound.relative for error in relative)
    else:
        ok = all(comparison.ok for comparison in comparisons)
    return Outcome(comparisons, ok)
