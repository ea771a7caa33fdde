"""Fixed-point mode on a SqueezeNet-shaped network: every fire module bit-exact with ONNX Runtime, the output within one step.

The fixed-point Conv layers used to requantise with a 31-bit multiplier, one
rounding of the exact product, where ONNX Runtime's QLinearConv rounds
float(acc) · scale in float32: near half steps the two disagreed by one step,
and the next layers grew that step (here up to four inside the network, three
at the output, for per-tensor int8).  They now reproduce float32's rounding
on integers, so every convolution, and with it every fire module (Concat of
differently scaled branches runs as ONNX Runtime's DequantizeLinear →
Concat → QuantizeLinear), equals ONNX Runtime given the same inputs.  The one
layer left that rounds on its own is the final global average pool (ONNX
Runtime sums dequantised floats in an order of its own): within one step.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.lsb_errors import worst_lsb_errors
from deeploy_core.testing.models.fire import ACTIVATIONS, image_inputs, quantised_fire_network
from deeploy_core.validate import Toolchain, build_executable

INPUTS = 30


@pytest.mark.parametrize("activations", ACTIVATIONS)
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
def test_fire_network_fixed_point_is_bit_exact_per_fire_module_and_within_one_lsb_at_the_output(
    per_channel: bool, activations: str, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = quantised_fire_network(tmp_path, per_channel, activations)
    _, generated = compile_model(model, CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host)
    layers = generated.report["layers"]
    convs = [layer for layer in layers if layer["op"] == "QLinearConv"]
    assert len(convs) == 20 and all(layer["requantization"]["rounding"] == "float32" for layer in convs)
    assert [layer["op"] for layer in layers if layer["op"].startswith("QLinear") and layer not in convs] == [
        "QLinearGlobalAveragePool"]
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    worst = worst_lsb_errors(generated, executable, model, (image_inputs(1000 + seed) for seed in range(INPUTS)))
    fires = {name: error for name, error in worst.items() if name.startswith("fire")}
    assert len(fires) == 6 and not any(fires.values()), worst
    assert worst["y"] <= 1, worst
