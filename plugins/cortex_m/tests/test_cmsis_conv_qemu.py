"""CMSIS-NN's conv and pool layers end to end: compile for cortex-m4 (DSP kernels) and, layer by layer, for
cortex-m55 (Helium kernels), cross-compile, run on QEMU's mps2-an386 / mps3-an547.

Expected outputs come from LiteRT's reference kernels on the ``.tflite`` (TFLite's int8 arithmetic, which
``--quantization fixed-point`` promises), or from ONNX Runtime for the int8 MaxPool (no requantisation).  The
folder's self-test compares on the board; every output must be off by 0 LSB, and report.json must show the
CMSIS-NN kernels ran (and, for DS-CNN, that no Transpose layer is left).

Skipped when arm-none-eabi-gcc, qemu-system-arm, CMSIS-NN (``../shared``/``$CMSIS_NN_PATH``) or the quant
extra (tensorflow, tf2onnx, ai_edge_litert) is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

CMSIS_NN = Path(os.environ.get("CMSIS_NN_PATH") or Path(__file__).resolve().parents[4] / "shared/third-party/cmsis-nn")
QUANT = ("tensorflow", "tf2onnx", "ai_edge_litert")
LAYERS = {"conv_relu": "arm_convolve_wrapper_s8", "conv_strided": "arm_convolve_wrapper_s8",
          "depthwise_relu6": "arm_depthwise_conv_wrapper_s8", "avgpool_same": "arm_avgpool_s8",
          "avgpool_valid": "arm_avgpool_s8", "global_average": "arm_convolve_wrapper_s8"}
"""Single-layer TFLite models -> the CMSIS-NN kernel that must run in them."""

pytestmark = [
    pytest.mark.skipif(not (CMSIS_NN / "Include/arm_nnfunctions.h").is_file(),
                       reason=f"no CMSIS-NN at {CMSIS_NN} (set CMSIS_NN_PATH or check out ../shared)"),
    pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
                       reason="arm-none-eabi-gcc or qemu-system-arm not installed"),
]
needs_quant = pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in QUANT),
                                 reason=f"the quant extra ({', '.join(QUANT)}) is not installed")


def _compile(model: Path, out: Path, inputs: list[np.ndarray], expected: list[np.ndarray] | None,
             platform: str = "cortex-m4") -> dict[str, Any]:
    """``deeploy-core compile`` for ``platform`` with a self-test of ``inputs``; the report."""
    np.savez(out.parent / f"{out.name}_x.npz", *inputs)
    command = [sys.executable, "-m", "deeploy_core", "compile", str(model), "-o", str(out), "--platform",
               platform, "--quantization", "fixed-point", "--inputs", str(out.parent / f"{out.name}_x.npz")]
    if expected is not None:
        np.savez(out.parent / f"{out.name}_y.npz", *expected)
        command += ["--outputs", str(out.parent / f"{out.name}_y.npz")]
    result = subprocess.run(command, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((out / "report.json").read_text())


def _run_bit_exact(out: Path, monkeypatch: pytest.MonkeyPatch, platform: str = "cortex-m4") -> None:
    from plugins.cortex_m.tests.cmsis_tflite_cases import run_on_board

    monkeypatch.setenv("CMSIS_NN_PATH", str(CMSIS_NN))
    run = run_on_board(out, platform)
    assert run.self_test_passed, run.describe()
    errors = re.findall(r"max abs error (\S+),", run.stdout)
    assert errors and all(float(e) == 0 for e in errors), run.stdout


def _litert_case(model: Path, tflite: Path, out: Path, seed: int, platform: str = "cortex-m4") -> dict[str, Any]:
    from deeploy_core.api import CompileOptions, compile_model
    from deeploy_core.plugins import PluginHost
    from deeploy_core.testing.quant_checks import litert_reference, random_samples

    _, generated = compile_model(model, CompileOptions(platform=platform, quantization="fixed-point"),
                                 PluginHost.discover())
    sample = random_samples(generated, count=1, seed=seed)[0]
    expected = litert_reference(tflite, generated)(sample)
    return _compile(model, out, [sample[spec.name] for spec in generated.inputs], list(expected), platform)


def _kernels(report: dict[str, Any]) -> list[str]:
    return [layer["kernel"] for layer in report["layers"]]


@pytest.fixture(scope="module")
def layer_models() -> Path:
    spec = importlib.util.spec_from_file_location(
        "tflite_layer_models", Path(__file__).resolve().parents[2] / "generic_c/tests/tflite_layer_models.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return Path(module.converted())


@needs_quant
@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("name", sorted(LAYERS))
def test_single_tflite_layer_is_bit_exact_with_litert_on_qemu(name: str, platform: str, layer_models: Path,
                                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = _litert_case(layer_models / f"{name}.onnx", layer_models / f"{name}.tflite", tmp_path / name, seed=1,
                          platform=platform)
    assert f"CMSIS-NN {LAYERS[name]}" in _kernels(report)
    assert "Transpose" not in [layer["op"] for layer in report["layers"]], _kernels(report)
    _run_bit_exact(tmp_path / name, monkeypatch, platform)


HEAVY = pytest.mark.heavy_model
NETWORK_CASES = [pytest.param("dscnn"), pytest.param("tiny_cnn"), pytest.param("resnet8", marks=HEAVY),
                 pytest.param("mobilenet_v1_025", marks=HEAVY)]
"""DS-CNN and tiny_cnn (residual Add) take seconds; ResNet-8 and MobileNetV1-0.25 a minute and a half to
convert the first time, so they run only when ``-m`` names ``heavy_model``."""


@needs_quant
@pytest.mark.parametrize("name", NETWORK_CASES)
def test_network_runs_cmsis_nn_channels_last_bit_exact_with_litert(name: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   request: pytest.FixtureRequest) -> None:
    from deeploy_core.testing.tflite_export import converted

    heavy = request.node.get_closest_marker("heavy_model") is not None
    if heavy and "heavy_model" not in (request.config.getoption("markexpr", "") or ""):
        pytest.skip("converting the network takes minutes: run with -m heavy_model")
    files = converted(name)
    report = _litert_case(files.int8_onnx, files.int8_tflite, tmp_path / name, seed=2)
    kernels = _kernels(report)
    assert not [layer for layer in report["layers"] if layer["op"] == "Transpose"], kernels
    assert "QLinearConv" not in [layer["op"] for layer in report["layers"]], kernels
    if name == "dscnn":
        assert kernels.count("CMSIS-NN arm_convolve_wrapper_s8") == 5
        assert kernels.count("CMSIS-NN arm_depthwise_conv_wrapper_s8") == 4
        assert kernels.count("CMSIS-NN arm_avgpool_s8") == 1
    _run_bit_exact(tmp_path / name, monkeypatch)


@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m55"])
def test_int8_max_pool_matches_onnx_runtime(platform: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """int8 MaxPool (padded, strided), NCHW in and out: CMSIS-NN between two real transposes."""
    helper = onnx.helper
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    graph = helper.make_graph([node], "maxpool", [helper.make_tensor_value_info("x", onnx.TensorProto.INT8,
                                                                                [1, 5, 7, 6])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.INT8, [1, 5, 4, 3])])
    model = tmp_path / "maxpool.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), model)
    sample = np.random.default_rng(0).integers(-128, 128, (1, 5, 7, 6)).astype(np.int8)
    report = _compile(model, tmp_path / "maxpool", [sample], None, platform)
    assert "CMSIS-NN arm_max_pool_s8" in _kernels(report)
    _run_bit_exact(tmp_path / "maxpool", monkeypatch, platform)
