"""The largest error in quantisation steps per output of a built network over many inputs, against ONNX Runtime.

A bound in LSB is a statement about every input; one input rarely lands a
value near a rounding tie, so the accuracy tests run many and keep the worst
error of each output (by name, as ``compare_outputs`` reports them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from deeploy_core.network import GeneratedNetwork
from deeploy_core.validate import compare_outputs, run_network
from deeploy_core.validate.reference import run_reference


def worst_lsb_errors(generated: GeneratedNetwork, executable: Path, model: Path,
                     inputs: Iterable[dict[str, np.ndarray]]) -> dict[str, float]:
    """Per quantised output, the largest ``|actual - reference|`` in steps of its scale over ``inputs``.

    Raises ``ValueError`` when an output is not quantised (it has no step to count in).
    """
    worst: dict[str, float] = {}
    for sample in inputs:
        actual, _ = run_network(executable, generated, sample, repeats=1)
        for comparison in compare_outputs(generated, actual, run_reference(model, sample), 0.0, 0.0, lsb_tolerance=1.0):
            if comparison.max_lsb_error is None:
                raise ValueError(f"output {comparison.name!r} is not quantised: it has no LSB")
            # Errors are whole steps computed in float: 1.0000004 is one step.
            worst[comparison.name] = max(worst.get(comparison.name, 0.0), round(comparison.max_lsb_error, 3))
    return worst
