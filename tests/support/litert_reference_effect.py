"""What ``validate --reference MODEL.tflite`` must do, run through the command line (shared by tests/quant and the
option-effects table of tests/test_cli_option_effects.py).

On a small Keras MLP converted to int8 TFLite and through tf2onnx:

* with the ``.tflite`` it came from, validate passes and names LiteRT's
  reference kernels as the reference;
* with the same network whose largest weight tensor is negated (inputs and
  outputs unchanged), validate fails, although ONNX Runtime on the model (the
  default reference) passes: LiteRT's outputs on the named file are what is
  compared;
* a ``.tflite`` of another network (another input shape) and the float
  ``.tflite`` (float input) are refused with one line naming the input;
* ``--quantization fixed-point`` (TFLite's arithmetic) is judged at 0 LSB
  against the ``.tflite`` and at 1 LSB against ONNX Runtime by default.

Only this repository's tests run these checks, so they live here, not in the installed
:mod:`deeploy_core.testing`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from tests.support.tflite_edit import with_negated_weights
from deeploy_core.testing.tflite_export import converted
from deeploy_core.validate.litert_reference import KERNELS


class Outcome(Protocol):
    exit_code: int
    stdout: str
    stderr: str


def check_reference_effect(run: Callable[[Sequence[str]], Outcome], scratch: Path) -> None:
    """``run(args)`` invokes ``deeploy-core ARGS`` and returns its outcome; ``scratch`` is a folder to write into."""
    mlp, cnn = converted("tiny_mlp"), converted("tiny_cnn")
    model = str(mlp.int8_onnx)
    base = ["validate", model, "--platform", "generic-c", "-q"]
    wrong = with_negated_weights(mlp.int8_tflite, scratch / "tiny_mlp_negated.int8.tflite")

    default = run(base)
    same = run([*base, "--reference", str(mlp.int8_tflite)])
    negated = run([*base, "--reference", str(wrong)])
    other_network = run([*base, "--reference", str(cnn.int8_tflite)])
    float_file = run([*base, "--reference", str(mlp.float_tflite)])
    fixed_point = [*base, "--quantization", "fixed-point"]
    fixed_litert, fixed_ort = run([*fixed_point, "--reference", str(mlp.int8_tflite)]), run(fixed_point)

    assert default.exit_code == 0 and "reference: ONNX Runtime" in default.stdout, default.stderr
    assert same.exit_code == 0, same.stderr
    assert f"reference: {KERNELS} on int8.tflite" in " ".join(same.stdout.split()), same.stdout
    assert negated.exit_code == 1 and "integer values differ" in negated.stderr, negated.stdout + negated.stderr
    assert other_network.exit_code != 0 and "input 0" in other_network.stderr \
        and "[1, 12, 12, 3]" in other_network.stderr and "[1, 32]" in other_network.stderr, other_network.stderr
    assert float_file.exit_code != 0 and "is float32 [1, 32]" in float_file.stderr \
        and "is int8 [1, 32]" in float_file.stderr, float_file.stderr
    # fixed-point computes TFLite's arithmetic: judged at 0 LSB against LiteRT, at 1 against ONNX Runtime
    assert fixed_litert.exit_code == 0 and "<= 0 LSB" in fixed_litert.stdout, fixed_litert.stdout + fixed_litert.stderr
    assert "<= 1 LSB" in fixed_ort.stdout, fixed_ort.stdout + fixed_ort.stderr
