"""Whole TFLite networks on the Cortex-M4 platform, bit-exact with LiteRT on QEMU (issue 35).

``tiny_mlp`` (three Dense) and ``tiny_cnn`` (a residual Add, a Dense, a
Softmax) run in seconds; the MLPerf Tiny networks are ``heavy_model`` (their
conversion through TensorFlow takes minutes when not cached).

``fc_autoencoder`` (MLPerf Tiny's anomaly detection: ten Dense layers) must
run every layer on ``arm_fully_connected_per_channel_s8``; ``dscnn``'s final
Dense and Softmax must be CMSIS-NN's (its convolutions are whatever the
platform maps them to).  Twenty rows of random int8 inputs per run, every
output equal to LiteRT's on the ``.tflite``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from plugins.cortex_m.tests.cmsis_tflite_cases import compile_and_run, kernels, needs_emulator

pytestmark = [pytest.mark.quant, needs_emulator]
FC = "QGemm CMSIS-NN arm_fully_connected_per_channel_s8"


@pytest.fixture(autouse=True)
def _heavy_only_when_asked(request: pytest.FixtureRequest) -> None:
    """``heavy_model`` cases run only when ``-m`` names the marker (as the core's and generic C's conftests do)."""
    if request.node.get_closest_marker("heavy_model") and "heavy_model" not in (
            request.config.getoption("markexpr", "") or ""):
        pytest.skip("converts an MLPerf Tiny network through TensorFlow when not cached: run with -m heavy_model")


def _files(name: str) -> tuple[Path, Path]:
    from deeploy_core.testing.tflite_export import converted

    files = converted(name)
    return files.int8_onnx, files.int8_tflite


def test_tiny_mlp_runs_every_layer_on_cmsis_nn_bit_exact_with_litert(tmp_path: Path) -> None:
    report = compile_and_run(*_files("tiny_mlp"), tmp_path)
    assert kernels(report) == [FC] * 3


def test_tiny_cnn_residual_add_dense_and_softmax_run_on_cmsis_nn_bit_exact_with_litert(tmp_path: Path) -> None:
    report = compile_and_run(*_files("tiny_cnn"), tmp_path)
    assert "QLinearAdd CMSIS-NN arm_elementwise_add_s8" in kernels(report)
    assert kernels(report)[-2:] == [FC, "QLinearSoftmax CMSIS-NN arm_softmax_s8"]


@pytest.mark.heavy_model
def test_fc_autoencoder_runs_every_layer_on_cmsis_nn_bit_exact_with_litert(tmp_path: Path) -> None:
    report = compile_and_run(*_files("fc_autoencoder"), tmp_path)
    assert kernels(report) == [FC] * 10


@pytest.mark.heavy_model
def test_dscnn_dense_and_softmax_run_on_cmsis_nn_bit_exact_with_litert(tmp_path: Path) -> None:
    report = compile_and_run(*_files("dscnn"), tmp_path)
    assert kernels(report)[-2:] == [FC, "QLinearSoftmax CMSIS-NN arm_softmax_s8"]
