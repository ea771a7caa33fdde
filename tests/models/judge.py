"""Validating one case against ONNX Runtime and judging it by its bound.

Float outputs of random-weight networks range from 1e-2 to 1e1, so a fixed
absolute tolerance would be either vacuous or too strict; they are judged by
the error relative to the output's max ``|value|`` (what ``validate``
prints as "max rel error"), and an all-zero reference fails outright instead
of passing whatever the code computes.  Quantised outputs are judged in
quantisation steps.  Fixed-point cases are judged per layer: each quantised
layer compiled alone, fed ONNX Runtime's values of its inputs, within one step
of ONNX Runtime's output (:mod:`deeploy_core.testing.layerwise`).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx

from deeploy_core.api import CompileOptions, validate_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.layerwise import LayerCheck, check_layers
from deeploy_core.validate import OutputComparison
from deeploy_core.validate.data import graph_input_specs
from tests.models.cases import Case


@dataclass(frozen=True)
class Outcome:
    """How a case's outputs compare with ONNX Runtime's, and whether that meets its bound."""

    comparisons: tuple[OutputComparison, ...]
    ok: bool
    layers: tuple[LayerCheck, ...] = ()
    """Per-layer checks (a per-layer bound), each with its largest error in steps."""

    @property
    def relative_error(self) -> float | None:
        """The worst output's error in units of its max |reference| (None when a reference is all zeros)."""
        errors = [comparison.max_relative_error for comparison in self.comparisons]
        return None if not errors or any(error is None for error in errors) else max(e for e in errors if e is not None)

    @property
    def lsb_error(self) -> float | None:
        errors = [comparison.max_lsb_error for comparison in self.comparisons if comparison.max_lsb_error is not None]
        errors += [float(check.error) for check in self.layers]
        return max(errors) if errors else None

    def describe(self) -> str:
        """Per output: scale, errors and cosine (and, for quantised outputs, how many values miss the bound); per
        layer, the layers outside their bound."""
        if self.layers:
            failing = [check for check in self.layers if not check.ok]
            return f"{len(self.layers)} layers, {len(failing)} outside their bound" + "".join(
                f"; {check.layer.output} ({', '.join(check.ops)}): {check.error} steps, bound {check.bound}"
                for check in failing)
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
    if bound.per_layer:
        return _per_layer(case.path(), options, host, runtime_cache)
    _, result = validate_model(case.path(), options, host, atol=0.0, repeats=1, cache_dir=runtime_cache,
                               lsb_tolerance=bound.lsb if bound.lsb else None)
    comparisons = tuple(result.comparisons)
    if bound.relative is not None:
        relative = [comparison.max_relative_error for comparison in comparisons]
        ok = all(error is not None and error <= bound.relative for error in relative)
    else:
        ok = all(comparison.ok for comparison in comparisons)
    return Outcome(comparisons, ok)


PER_LAYER_SAMPLES = 2
"""Seeded inputs each layer is checked on (each layer is a build of its own: the count multiplies the cost)."""


def _per_layer(model: Path, options: CompileOptions, host: PluginHost, runtime_cache: Path | None) -> Outcome:
    """Every quantised layer compiled alone with ``options``, fed ONNX Runtime's values, within its bound."""
    specs = graph_input_specs(onnx.load(str(model)))
    samples = [{name: np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
                for name, _, shape in specs} for seed in range(PER_LAYER_SAMPLES)]
    with tempfile.TemporaryDirectory(prefix="per-layer-") as folder:
        checks = tuple(check_layers(model, options, host, samples, Path(folder), runtime_cache))
    return Outcome((), bool(checks) and all(check.ok for check in checks), checks)
