"""TFLite's int8 Softmax on CMSIS-NN (``arm_softmax_s8``), bit-exact with LiteRT on QEMU's Cortex-M4 (issue 35).

``softmax`` (37 classes, calibrated at spread 2) and ``softmax_wide`` (spread
40: most differences fall beyond TFLite's radius, where the output is -128),
twenty rows of random int8 inputs per run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.cortex_m.tests.cmsis_tflite_cases import compile_and_run, kernels, layer_models, needs_emulator

pytestmark = [pytest.mark.quant, needs_emulator]


@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", ["softmax", "softmax_wide"])
def test_softmax_runs_cmsis_nn_bit_exact_with_litert(name: str, platform: str, tmp_path: Path) -> None:
    folder = layer_models()
    report = compile_and_run(folder / f"{name}.onnx", folder / f"{name}.tflite", tmp_path, platform=platform)
    assert kernels(report) == ["QLinearSoftmax CMSIS-NN arm_softmax_s8"]
