"""Running a built network on inputs and comparing its outputs."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.validate.compare import OutputComparison, judge_output
from deeploy_core.validate.target_result import TargetRun
from deeploy_core.tolerance import Tolerance, rule_for


@dataclass
class ValidationResult:
    """Per-output comparisons, the best measured run time and, from a profile build, each layer's best time."""

    comparisons: list[OutputComparison]
    best_ns: float
    outputs: list[np.ndarray]
    layer_ns: tuple[float, ...] = ()
    target: TargetRun | None = None
    """Set when the network ran on its platform's board (emulated) instead of the host: the board and, when the
    instruction counter could run, instructions and estimated cycles per inference and per layer."""

    @property
    def ok(self) -> bool:
        return all(comparison.ok for comparison in self.comparisons)

    @property
    def warnings(self) -> list[str]:
        """One line per output too small for an explicit absolute tolerance: a pass there proves little."""
        return [line for line in (comparison.warning for comparison in self.comparisons) if line is not None]

    @property
    def failures(self) -> list[str]:
        """One line per failing output saying why (the table's MISMATCH alone does not)."""
        return [line for line in (comparison.failure for comparison in self.comparisons) if line is not None]


def run_network(
    executable: Path, generated: GeneratedNetwork, inputs: dict[str, np.ndarray], repeats: int = 2
) -> tuple[list[np.ndarray], float]:
    """Feed ``inputs`` (by name) to the program; returns the outputs and the best time in ns."""
    outputs, best, _ = run_profiled(executable, generated, inputs, repeats)
    return outputs, best


def run_profiled(
    executable: Path, generated: GeneratedNetwork, inputs: dict[str, np.ndarray], repeats: int = 2
) -> tuple[list[np.ndarray], float, tuple[float, ...]]:
    """:func:`run_network`, plus each layer's best time in ns when the program is a profile build (else ``()``)."""
    directory = executable.parent
    input_file, output_file = directory / "inputs.bin", directory / "outputs.bin"
    with input_file.open("wb") as handle:
        for spec in generated.inputs:
            handle.write(np.ascontiguousarray(inputs[spec.name], dtype=spec.dtype).tobytes())
    result = subprocess.run(
        [str(executable), str(input_file), str(output_file), str(repeats)], capture_output=True, text=True, timeout=600
    )
    if result.returncode != 0:
        raise DeeployError(f"the generated network failed (exit {result.returncode}): {result.stderr.strip()[:500]}")
    raw = output_file.read_bytes()
    outputs, at = [], 0
    for spec in generated.outputs:
        dtype = np.dtype(spec.dtype)
        count = int(np.prod(spec.shape, dtype=np.int64))
        outputs.append(np.frombuffer(raw, dtype=dtype, count=count, offset=at).reshape(spec.shape).copy())
        at += count * dtype.itemsize
    best = float(result.stdout.split()[1]) if result.stdout.startswith("best_ns") else float("nan")
    return outputs, best, layer_times(result.stdout)


def layer_times(stdout: str) -> tuple[float, ...]:
    """The harness's ``layer_ns K NS`` lines, in layer order."""
    times = {int(fields[1]): float(fields[2]) for fields in (line.split() for line in stdout.splitlines())
             if len(fields) == 3 and fields[0] == "layer_ns"}
    return tuple(times[index] for index in sorted(times))


def compare_outputs(
    generated: GeneratedNetwork, actual: list[np.ndarray], expected: list[np.ndarray], atol: float | None = None,
    rtol: float | None = None, lsb_tolerance: float | None = None, tolerance: Tolerance | None = None,
) -> list[OutputComparison]:
    """One comparison per output, by position, under the rule for the output's type
    (:func:`deeploy_core.tolerance.rule_for`; ``tolerance``, when given, instead of the three values)."""
    if len(expected) < len(actual):
        raise DeeployError(f"{len(expected)} reference outputs for {len(actual)} network outputs")
    tolerance = tolerance or Tolerance(atol, rtol, lsb_tolerance)
    return [
        judge_output(spec.name, got, want, rule_for(tolerance, spec.dtype, spec.step), spec.step)
        for spec, got, want in zip(generated.outputs, actual, expected)
    ]
