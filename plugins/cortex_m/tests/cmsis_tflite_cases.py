"""Running a TFLite-converted model through the Cortex-M4 platform on QEMU and comparing with LiteRT, bit for bit.

The user's flow, end to end: ``deeploy-core compile MODEL --platform cortex-m4
--quantization fixed-point --inputs X.npz --outputs Y.npz`` writes a folder
with a self-test; it is cross-compiled with the user's CMSIS-NN
(``CMSIS_NN_PATH``) and run on QEMU's mps2-an386, which checks every integer
output exactly (0 LSB).  The expected outputs come from LiteRT on the
``.tflite``.  A sample is ``ROWS`` inputs at once: the model's batch is made
dynamic and set to ``ROWS`` (LiteRT runs the one-row file row by row), so one
emulator run covers many inputs and the fully connected kernels see M > 1.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from deeploy_core.validate.litert_reference import run_litert_reference
from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, EmulatorRun, run_self_test

ROWS = 20
"""Inputs per emulator run (the batch the model is compiled for)."""
CMSIS_NN_RELATIVE = Path("shared") / "third-party" / "cmsis-nn"
"""Where the project's machines keep the user's CMSIS-NN, next to the repository."""


def _repository_roots() -> list[Path]:
    """This checkout's root and, for a git worktree, the main checkout's (``../shared`` sits next to it)."""
    root = Path(__file__).resolve().parents[3]
    roots = [root]
    git = root / ".git"
    if git.is_file() and git.read_text().startswith("gitdir:"):
        roots.append(Path(git.read_text().split(":", 1)[1].strip()).parents[2])
    return roots


def cmsis_nn_path() -> Path | None:
    """``$CMSIS_NN_PATH``, else ``../shared/third-party/cmsis-nn`` beside the repository (None when absent)."""
    candidates = [Path(os.environ["CMSIS_NN_PATH"])] if os.environ.get("CMSIS_NN_PATH") else []
    candidates += [root.parent / CMSIS_NN_RELATIVE for root in _repository_roots()]
    return next((path for path in candidates if (path / "Include" / "arm_nnfunctions.h").is_file()), None)


def _missing_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is None
    except (ImportError, ValueError):
        return True


def skip_reason() -> str | None:
    """Why the emulated CMSIS-NN tests cannot run here (None: they can)."""
    if cmsis_nn_path() is None:
        return "CMSIS-NN not found: set CMSIS_NN_PATH or keep it at ../shared/third-party/cmsis-nn"
    missing = CORTEX_M4_MPS2.missing()
    if missing:
        return missing
    absent = [name for name in ("tensorflow", "tf2onnx", "ai_edge_litert") if _missing_module(name)]
    return f"{', '.join(absent)} not installed: the LiteRT references need the 'quant' extra" if absent else None


needs_emulator = pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")


def layer_models() -> Path:
    """The folder of generic C's cached single-layer TFLite models (``NAME.tflite`` and ``NAME.onnx``)."""
    from plugins.generic_c.tests import tflite_layer_models

    return tflite_layer_models.converted()


def _one_row(values: onnx.ValueInfoProto) -> tuple[int, ...]:
    """A graph input's or output's shape for one row (the batch dimension 1)."""
    return (1, *(dim.dim_value or 1 for dim in values.type.tensor_type.shape.dim[1:]))


def _batched(model: Path, folder: Path) -> tuple[Path, list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """``model`` with a dynamic first dimension; (path, inputs' and outputs' (name, one-row shape))."""
    proto = onnx.load(str(model))
    inputs = [(value.name, _one_row(value)) for value in proto.graph.input]
    outputs = [(value.name, _one_row(value)) for value in proto.graph.output]
    for value in (*proto.graph.input, *proto.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "batch"
    path = folder / f"{model.stem}-batch.onnx"
    onnx.save(proto, str(path))
    return path, inputs, outputs


def litert_rows(tflite: Path, inputs: dict[str, np.ndarray], outputs: list[tuple[str, tuple[int, ...]]]
                ) -> list[np.ndarray]:
    """LiteRT's reference kernels' (BUILTIN_REF: what fixed-point mode promises) outputs, row by row."""
    specs = [(name, np.dtype(np.int8), shape) for name, shape in outputs]
    rows = [run_litert_reference(tflite, {name: values[row:row + 1] for name, values in inputs.items()}, specs)
            for row in range(ROWS)]
    return [np.concatenate(values) for values in zip(*rows)]


def compile_with_self_test(model: Path, tflite: Path, folder: Path, seed: int = 0,
                           platform: str = "cortex-m4") -> Path:
    """``model`` compiled for ``ROWS`` rows into ``folder/out`` with a self-test expecting LiteRT's outputs exactly.

    The self-test is told ``--lsb-tolerance 0``: fixed-point mode's default tolerates one step.
    """
    batched, inputs, outputs = _batched(model, folder)
    rng = np.random.default_rng(seed)
    samples = {name: rng.integers(-128, 128, (ROWS, *shape[1:])).astype(np.int8) for name, shape in inputs}
    np.savez(folder / "inputs.npz", *samples.values())
    np.savez(folder / "outputs.npz", *litert_rows(tflite, samples, outputs))
    out = folder / "out"
    shapes = [arg for name, shape in inputs for arg in ("--input-shape", f"{name}={'x'.join(map(str, (ROWS, *shape[1:])))}")]
    command = [sys.executable, "-m", "deeploy_core", "compile", str(batched), "-o", str(out), "--platform", platform,
               "--quantization", "fixed-point", "--inputs", str(folder / "inputs.npz"), "--outputs",
               str(folder / "outputs.npz"), "--lsb-tolerance", "0", "--option", f"cmsis_nn_path={cmsis_nn_path()}",
               "-q", *shapes]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return out


def bit_exact(run: EmulatorRun) -> bool:
    """The self-test passed and every output's verdict line says ``max abs error 0``."""
    verdicts = [line for line in run.stdout.splitlines() if line.startswith("output ")]
    return run.self_test_passed and bool(verdicts) and all("max abs error 0," in line for line in verdicts)


def run_on_board(out: Path, platform: str) -> EmulatorRun:
    """The folder's self-test on the platform's board: the core's Cortex-M4 runner (``-Os``) for ``cortex-m4``,
    the folder's own ``make test`` (its Makefile's board, ``-O2``) for the others."""
    if platform == "cortex-m4":
        return run_self_test(out, CORTEX_M4_MPS2, timeout=300)
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CFLAGS", "CC", "AR")}
    started = time.monotonic()
    made = subprocess.run(["make", "--no-print-directory", "-C", str(out), "-j2", "test"], capture_output=True,
                          text=True, env=environment, timeout=300, stdin=subprocess.DEVNULL)
    return EmulatorRun(made.returncode, made.stdout, made.stderr, time.monotonic() - started)


def compile_and_run(model: Path, tflite: Path, folder: Path, seed: int = 0, platform: str = "cortex-m4"
                    ) -> dict[str, Any]:
    """Compile ``model`` for ``ROWS`` rows with a LiteRT-checked self-test, run it on the platform's emulated
    board; return report.json.

    Fails (with the program's output) unless every integer output equals LiteRT's.
    """
    out = compile_with_self_test(model, tflite, folder, seed, platform)
    run = run_on_board(out, platform)
    assert bit_exact(run), run.describe()
    report: dict[str, Any] = json.loads((out / "report.json").read_text())
    shutil.rmtree(out / f"build-{CORTEX_M4_MPS2.name}-Os", ignore_errors=True)
    shutil.rmtree(out / "build", ignore_errors=True)
    return report


def kernels(report: dict[str, Any]) -> list[str]:
    """The kernel (mapper) name of every layer, in order."""
    return [str(layer["kernel"]) for layer in report["layers"]]
