"""One fuzzed graph on one target: compile, build, run twice, compare with ONNX Runtime, say what happened.

The outcome kinds keep apart what the fuzzer must tell apart:

``match``     every output agrees (float graphs within 1e-4 absolute + 1e-4
              relative, QDQ graphs in exact mode bit for bit, in fixed-point
              mode within one quantisation step, for the outputs
              :mod:`~deeploy_core.testing.fuzz.rounding` says can be judged);
``mismatch``  the program ran and some output differs: a miscompilation;
``rejected``  the compiler refused the graph with a one-line
              :class:`~deeploy_core.errors.DeeployError` (the strategies draw
              only supported combinations, so this too deserves a look);
``crash``     anything else: an exception that is not a ``DeeployError``,
              generated code the C compiler rejects, or a program that fails
              or is not repeatable.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from pathlib import Path

import onnx

from deeploy_core.api import compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.network import GeneratedNetwork
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.fuzz.graphs import FuzzGraph
from deeploy_core.testing.fuzz.rounding import judged_outputs
from deeploy_core.testing.fuzz.targets import Target
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_core.validate import Toolchain, build_executable, compare_outputs, run_network
from deeploy_core.validate.reference import run_reference

TOLERANCES: dict[str, tuple[float, float, float | None]] = {
    "float": (1e-4, 1e-4, None), "qdq": (0.0, 0.0, None), "qdq-fixed": (0.0, 0.0, 1.0)}
"""(absolute, relative, LSB) tolerance per flavour."""
QUANTIZATION = {"float": "exact", "qdq": "exact", "qdq-fixed": "fixed-point"}
KINDS = ("match", "mismatch", "rejected", "crash")


@dataclass(frozen=True)
class Outcome:
    """What happened to one graph on one target (the target after any L1 retry)."""

    kind: str
    target: Target
    stage: str = ""
    """``compile``, ``build``, ``run`` or ``compare``."""
    detail: str = ""
    seconds: dict[str, float] | None = None
    """Wall time per stage reached."""
    unjudged: int = 0
    """Outputs run but not compared (fixed-point outputs a second rounding may have moved by more than a step)."""

    @property
    def ok(self) -> bool:
        return self.kind == "match"


def compile_for(path: Path, target: Target, host: PluginHost, quantization: str = "exact"
                ) -> tuple[Target, GeneratedNetwork]:
    """Compile ``path``; an L1 the tiler finds too small is replaced once by the size it names."""
    try:
        return target, compile_model(path, target.options(quantization), host)[1]
    except TilingInfeasibleError as error:
        if error.level != "L1" or error.needed_bytes is None or "L1" not in target.level_sizes:
            raise
        needed = error.needed_bytes
    retried = target.with_l1(needed)
    return retried, compile_model(path, retried.options(quantization), host)[1]


def check_graph(graph: FuzzGraph, target: Target, host: PluginHost, workdir: Path, cache_dir: Path | None = None,
                toolchain: Toolchain | None = None) -> Outcome:
    """Run ``graph`` on ``target`` in ``workdir`` and compare with ONNX Runtime."""
    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / "model.onnx"
    onnx.save(graph.model, path)
    inputs = graph.inputs()
    expected = run_reference(path, inputs)
    clock = _Clock()
    try:
        target, generated = compile_for(path, target, host, QUANTIZATION[graph.flavour])
    except DeeployError as error:
        return Outcome("rejected", target, "compile", str(error), clock.lap("compile"))
    except Exception:  # noqa: BLE001 - any other exception is the bug being looked for
        return Outcome("crash", target, "compile", traceback.format_exc(), clock.lap("compile"))
    clock.lap("compile")
    try:
        executable = build_executable(generated, workdir / "build", toolchain or Toolchain.from_environment(),
                                      cache_dir)
    except DeeployError as error:
        return Outcome("crash", target, "build", str(error), clock.lap("build"))
    clock.lap("build")
    try:
        actual, _ = run_network(executable, generated, inputs, repeats=2)
    except DeeployError as error:
        return Outcome("crash", target, "run", str(error), clock.lap("run"))
    seconds = clock.lap("run")
    atol, rtol, lsb = TOLERANCES[graph.flavour]
    comparisons = compare_outputs(generated, actual, expected, atol, rtol, lsb)
    names = [spec.name for spec in generated.outputs]
    judged = set(judged_outputs(generated.report["layers"], names) if QUANTIZATION[graph.flavour] == "fixed-point"
                 else names)
    unjudged = len(names) - len(judged)
    failing = [c for c in comparisons if not c.ok and c.name in judged]
    if not failing:
        return Outcome("match", target, "compare", seconds=seconds, unjudged=unjudged)
    detail = "; ".join(f"{c.name}: {c.mismatches}/{c.size} differ, max abs error {c.max_abs_error:.3g}"
                       + (f" ({c.max_lsb_error:.3g} LSB)" if c.max_lsb_error is not None else "") for c in failing)
    return Outcome("mismatch", target, "compare", detail, seconds, unjudged)


class _Clock:
    """Wall time per stage, for the slowest-compile report of the long profile."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.seconds: dict[str, float] = {}

    def lap(self, stage: str) -> dict[str, float]:
        now = time.perf_counter()
        self.seconds[stage] = now - self.start
        self.start = now
        return dict(self.seconds)
