"""Fixed-point mode on a SqueezeNet-shaped network: integer layers, each within one step of ONNX Runtime.

Fixed-point mode computes what TFLite's reference int8 kernels compute: each
convolution's int32 accumulator is requantised with a 31-bit multiplier and
two roundings (a doubling high multiply, then a rounding shift), where ONNX
Runtime rounds ``float(acc) · scale`` in float32.  Given the same inputs the
two land within one step of each other (both are within half a step and a
hair of the exact value); a step of difference entering the next convolution
can grow, so against an ONNX Runtime-quantised model there is no bound at the
fire modules or the classes, and none is claimed.  What holds, and is checked
here, is per layer: every quantised layer compiled alone and fed ONNX
Runtime's own values of its inputs is within one step of ONNX Runtime's
output (:mod:`deeploy_core.testing.layerwise`).  Bit-exactness per fire
module is exact mode's claim (test_qdq_fire.py); bit-exactness with LiteRT is
fixed-point's, on TFLite-converted models (the quant tests).
"""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.layerwise import check_layers, quantised_layers
from deeploy_core.testing.models.fire import ACTIVATIONS, image_inputs, quantised_fire_network

SAMPLES = 5
FIXED_POINT = CompileOptions(platform="generic-c", quantization="fixed-point")


def float_tensors(report: dict) -> set[str]:
    """Every float tensor a layer writes."""
    return {output["name"] for layer in report["layers"] for output in layer["outputs"]
            if output["dtype"].startswith("float")}


def concat_islands(model: Path) -> set[str]:
    """The float tensors of each Concat island ONNX Runtime's quantizer wrote (its dequantised inputs and its
    output) and the graph outputs (dequantised)."""
    graph = onnx.load(model).graph
    names = {value.name for value in graph.output}
    for node in graph.node:
        if node.op_type == "Concat":
            names.update([*node.input, *node.output])
    return names


@pytest.mark.parametrize("per_channel, activations", [
    pytest.param(per_channel, activations, id=f"{'per-channel' if per_channel else 'per-tensor'}-{activations}",
                 marks=[] if (per_channel, activations) == (False, "int8") else [pytest.mark.heavy_model])
    for per_channel in (False, True) for activations in ACTIVATIONS])
def test_fire_network_fixed_point_is_integer_and_every_layer_within_one_step_given_onnx_runtime_inputs(
    per_channel: bool, activations: str, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = quantised_fire_network(tmp_path, per_channel, activations)
    _, generated = compile_model(model, FIXED_POINT, generic_c_host)
    layers = generated.report["layers"]
    convs = [layer for layer in layers if layer["op"] == "QLinearConv"]
    assert len(convs) == 20 and all(layer["requantization"]["arithmetic"] == "tflite" for layer in convs)
    # The only float arithmetic left: each fire module's Concat of differently scaled branches (dequantised,
    # concatenated, quantised as ONNX Runtime does) and the dequantisation of the graph outputs.
    leftover = float_tensors(generated.report) - concat_islands(model)
    assert not leftover, sorted(leftover)
    checks = check_layers(model, FIXED_POINT, generic_c_host, [image_inputs(1000 + seed) for seed in range(SAMPLES)],
                          tmp_path / "layers", runtime_cache)
    assert len(checks) == len(quantised_layers(onnx.load(model)))
    conv_checks = [check for check in checks if check.ops == ("QLinearConv",)]
    assert len(conv_checks) == 20 and all(check.arithmetic == ("tflite",) and check.bound == 1 for check in conv_checks)
    failing = [(check.layer.output, check.ops, check.arithmetic, check.error, check.bound)
               for check in checks if not check.ok]
    assert not failing, failing
    print(f"{'per-channel' if per_channel else 'per-tensor'} {activations}: {len(checks)} layers, largest error "
          f"{max(check.error for check in checks)} step(s)")


def test_fire_network_fixed_point_has_no_float_layer(tmp_path: Path, generic_c_host: PluginHost) -> None:
    """Issue 30: a fully quantised network's report has no layer with a float output (but its graph outputs).

    The fire modules' Concat of differently scaled branches runs as one table rescale per branch and an integer
    Concat (deeploy_core.lowering.concat_rescale).
    """
    model = quantised_fire_network(tmp_path, per_channel=False, activations="int8")
    _, generated = compile_model(model, FIXED_POINT, generic_c_host)
    outputs = {value.name for value in onnx.load(model).graph.output}
    inside = float_tensors(generated.report) - outputs
    assert not inside, sorted(inside)
    assert "IntegerLookup" in {layer["op"] for layer in generated.report["layers"]}
