"""Checks of a converted int8 network over many inputs: its largest error in steps against a reference, its float layers.

A bit-exactness claim is a statement about every input, and one input rarely
lands a value near a rounding tie, so the quantisation tests run twenty
seeded inputs over the whole int8 range and keep the worst difference.  The
reference is a function of the inputs: ONNX Runtime on the model (exact mode)
or LiteRT on the ``.tflite`` (fixed-point mode).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from deeploy_core.network import GeneratedNetwork
from deeploy_core.validate import run_network
from deeploy_core.validate.litert_reference import run_litert_reference
from deeploy_core.validate.reference import run_reference

Reference = Callable[[dict[str, np.ndarray]], list[np.ndarray]]
SAMPLES = 20


def random_samples(generated: GeneratedNetwork, count: int = SAMPLES, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``count`` seeded inputs: integers over the whole range of integer inputs, standard normal floats otherwise."""
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(count):
        sample = {}
        for spec in generated.inputs:
            dtype = np.dtype(spec.dtype)
            if np.issubdtype(dtype, np.integer):
                info = np.iinfo(dtype)
                sample[spec.name] = rng.integers(info.min, int(info.max) + 1, spec.shape).astype(dtype)
            else:
                sample[spec.name] = rng.standard_normal(spec.shape).astype(dtype)
        samples.append(sample)
    return samples


def ort_reference(model: Path) -> Reference:
    """validate's default reference: ONNX Runtime on the model (QDQ islands fused as exact mode computes them)."""
    return lambda sample: run_reference(model, sample)


def litert_reference(tflite: Path, generated: GeneratedNetwork) -> Reference:
    """``validate --reference``'s: LiteRT's reference kernels on the ``.tflite`` file."""
    specs = [(spec.name, np.dtype(spec.dtype), tuple(spec.shape)) for spec in generated.outputs]
    return lambda sample: run_litert_reference(tflite, sample, specs)


def worst_steps(generated: GeneratedNetwork, executable: Path, samples: Iterable[dict[str, np.ndarray]],
                reference: Reference) -> dict[str, float]:
    """Per output, the largest ``|actual - reference|`` over ``samples``: integer outputs in steps of one,
    float outputs in their own units (the caller knows which it asked for)."""
    worst: dict[str, float] = {}
    for sample in samples:
        actual, _ = run_network(executable, generated, sample, repeats=1)
        for spec, got, want in zip(generated.outputs, actual, reference(sample)):
            if got.shape != want.shape:
                raise AssertionError(f"output {spec.name!r}: shape {list(got.shape)}, reference {list(want.shape)}")
            error = float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)), initial=0.0))
            worst[spec.name] = max(worst.get(spec.name, 0.0), error)
    return worst


def float_layers(report: dict[str, Any]) -> list[str]:
    """The report's layers with a float output ("op name"): a fully quantised network has none."""
    return [f"{layer['op']} {layer.get('node', '?')}" for layer in report["layers"]
            if any(str(output["dtype"]).startswith(("float", "bfloat")) for output in layer["outputs"])]
