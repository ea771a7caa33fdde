"""TFLite's FullyConnected on CMSIS-NN, bit-exact with LiteRT on QEMU's Cortex-M4 (issue 35).

Three single-layer models isolate the cases: per-channel weights with a bias
and a fused Relu (``dense_relu``), one weight scale (``dense_per_tensor``:
``arm_fully_connected_s8``) and no bias (``dense_no_bias``: a QLinearMatMul,
which the weight pass turns into a QGemm).  Twenty rows of random int8 inputs
per run; every output must equal LiteRT's.  That is the proof that defining
``CMSIS_NN_USE_SINGLE_ROUNDING`` for the fully connected sources gives
LiteRT's single rounding (CMSIS-NN's default double rounding differs on ties).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.testing.emulated_targets import CORTEX_M4_MPS2, run_self_test
from plugins.cortex_m.tests.cmsis_tflite_cases import (
    bit_exact, compile_and_run, compile_with_self_test, kernels, layer_models, needs_emulator,
)

pytestmark = [pytest.mark.quant, needs_emulator]

CASES = {
    "dense_relu": "QGemm CMSIS-NN arm_fully_connected_per_channel_s8",
    "dense_per_tensor": "QGemm CMSIS-NN arm_fully_connected_s8",
    "dense_no_bias": "QGemm CMSIS-NN arm_fully_connected_per_channel_s8",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_dense_layer_runs_cmsis_nn_bit_exact_with_litert(name: str, tmp_path: Path) -> None:
    folder = layer_models()
    report = compile_and_run(folder / f"{name}.onnx", folder / f"{name}.tflite", tmp_path)
    assert kernels(report) == [CASES[name]]
    assert report["layers"][0]["requantization"]["rounding"] == "single"


def test_cmsis_nn_default_double_rounding_would_not_be_litert(tmp_path: Path) -> None:
    """The same folder built without the single-rounding definition misses LiteRT on ties: the definition matters."""
    folder = layer_models()
    out = compile_with_self_test(folder / "dense_relu.onnx", folder / "dense_relu.tflite", tmp_path)
    makefile = out / "Makefile"
    text = makefile.read_text()
    assert text.count("-DCMSIS_NN_USE_SINGLE_ROUNDING") == 2  # the product's two translation units, nothing else
    makefile.write_text(text.replace("-DCMSIS_NN_USE_SINGLE_ROUNDING", ""))
    run = run_self_test(out, CORTEX_M4_MPS2, timeout=300)
    assert not bit_exact(run) and "MISMATCH" in run.stdout, run.describe()
