"""The four MLPerf Tiny int8 networks run bit-exactly on cortex-m4, cortex-m33 and cortex-m55 under QEMU, on
CMSIS-NN (issue 35).

ResNet-8, DS-CNN, MobileNetV1-0.25 at 96x96 and the FC autoencoder, written in
Keras, quantised to full int8 by TFLiteConverter and converted by ``tf2onnx
--tflite`` (the quantisation issue's exporters, cached), are compiled for
``cortex-m4``, ``cortex-m33`` and ``cortex-m55`` with ``--quantization
fixed-point`` (TFLite's arithmetic, which CMSIS-NN computes on both its DSP and
its Helium path).  One program holds five seeded inputs over the whole int8
range; it is cross-built with the folder's Makefile and run on QEMU's
``mps2-an386`` / ``mps2-an505`` / ``mps3-an547``,
and every output must equal LiteRT's reference kernels on the
``.tflite`` bit for bit.  report.json must show the layers the network is made
of running on CMSIS-NN's kernels (conv, depthwise, pooling, fully connected,
add, softmax), with no Transpose layer left between them.

Not marked ``heavy_model``: the exports are cached by the quant machinery and
the four networks take about a minute together; they run in CI, as the issue
asks.  Skipped when the quant extra, the Arm cross compiler, QEMU or CMSIS-NN
is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate.board_harness import parse_samples
from deeploy_core.validate.board_run import build_board_program, run_on_board

CMSIS_NN = Path(os.environ.get("CMSIS_NN_PATH") or Path(__file__).resolve().parents[4] / "shared/third-party/cmsis-nn")
QUANT = ("tensorflow", "tf2onnx", "ai_edge_litert")
SAMPLES = 5
KERNELS = {
    "resnet8": {"arm_convolve_wrapper_s8", "arm_elementwise_add_s8", "arm_avgpool_s8",
                "arm_fully_connected_per_channel_s8", "arm_softmax_s8"},
    "dscnn": {"arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_avgpool_s8", "arm_softmax_s8"},
    "mobilenet_v1_025": {"arm_convolve_wrapper_s8", "arm_depthwise_conv_wrapper_s8", "arm_avgpool_s8",
                         "arm_softmax_s8"},
    "fc_autoencoder": {"arm_fully_connected_per_channel_s8"},
}
"""Per network, CMSIS-NN kernels report.json must name (the int8 layers each network is made of)."""

pytestmark = [
    pytest.mark.quant,
    pytest.mark.skipif(not (CMSIS_NN / "Include/arm_nnfunctions.h").is_file(),
                       reason=f"no CMSIS-NN at {CMSIS_NN} (set CMSIS_NN_PATH or check out ../shared)"),
    pytest.mark.skipif(shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
                       reason="arm-none-eabi-gcc or qemu-system-arm not installed (Debian: gcc-arm-none-eabi, "
                              "libnewlib-arm-none-eabi, qemu-system-arm)"),
    pytest.mark.skipif(any(importlib.util.find_spec(module) is None for module in QUANT),
                       reason=f"the quant extra ({', '.join(QUANT)}) is not installed (make quant)"),
]


def _kernels(report: dict[str, object]) -> set[str]:
    layers = report["layers"]
    assert isinstance(layers, list)
    return {str(layer["kernel"]) for layer in layers}


@pytest.mark.parametrize("platform", ["cortex-m4", "cortex-m33", "cortex-m55"])
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_mlperf_tiny_int8_is_bit_exact_with_litert_on_cortex_m(name: str, platform: str, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from deeploy_cortex_m import plugin as cortex_m_plugin
    from deeploy_generic_c import plugin as generic_c_plugin

    from deeploy_core.testing.quant_checks import litert_reference, random_samples
    from deeploy_core.testing.tflite_export import converted

    monkeypatch.setenv("CMSIS_NN_PATH", str(CMSIS_NN))
    files = converted(name)
    host = PluginHost()
    host.add_plugin(generic_c_plugin, name="generic-c")
    host.add_plugin(cortex_m_plugin, name="cortex-m")
    _, generated = compile_model(files.int8_onnx, CompileOptions(platform=platform, quantization="fixed-point"),
                                 host)
    kernels = _kernels(generated.report)
    missing = [wanted for wanted in sorted(KERNELS[name]) if not any(wanted in kernel for kernel in kernels)]
    assert not missing, f"no layer ran {missing}; kernels: {sorted(kernels)}"
    assert not any(str(layer["op"]) == "Transpose" for layer in generated.report["layers"]), sorted(kernels)

    samples = random_samples(generated, count=SAMPLES, seed=35)
    program = build_board_program(generated, tmp_path / "board", samples, repeats=1)
    _, printed = run_on_board(generated.runtime.board, program, generated)
    reference = litert_reference(files.int8_tflite, generated)
    for number, (sample, actual) in enumerate(zip(samples, parse_samples(printed, generated.outputs, SAMPLES))):
        for spec, got, want in zip(generated.outputs, actual, reference(sample)):
            assert got.shape == want.shape, (spec.name, got.shape, want.shape)
            worst = int(np.max(np.abs(got.astype(np.int64) - want.astype(np.int64)), initial=0))
            assert worst == 0, f"sample {number}, output {spec.name}: {worst} LSB from LiteRT"
