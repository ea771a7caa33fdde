"""Brevitas' QCDQ and QONNX exports compile with no flags to integer kernels and reproduce their reference exactly.

A tiny CNN (:mod:`tests.quant.brevitas_export`: 8-bit input, two QuantConv2d
+ QuantReLU with a max pool between, a QuantLinear head with an 8-bit output
quantiser; 8- and 4-bit weights) is exported by ``export_onnx_qcdq`` and
``export_qonnx`` with both torch exporters, and a residual network with
Brevitas' other layers (4-bit per-channel weights, 4-bit activations,
QuantEltwiseAdd, TruncAvgPool2d) by the exporters that take its quantised
biases.  Each is compiled for generic-c and pulp-cluster with the defaults,
built and run on 20 inputs.  QCDQ files are held to ONNX Runtime (validate's
reference), QONNX files to qonnx's own executor after qonnx's cleanup: the
output is quantised, so "exactly" means 0 LSB.  Every layer must be integer
(the DequantizeLinear that makes the float graph output excepted), also in
the QCDQ dynamo export, whose biases Brevitas leaves float: exact mode's
kernels add them to the int32 sum in float32, as ONNX Runtime adds them to
its float sum (:mod:`deeploy_generic_c.kernels.float_bias`).  Without the ``quant`` extra (torch, brevitas, qonnx) the tests
skip, saying which package is missing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_core.validate.reference import run_reference
from tests.quant.brevitas_export import EXPORTS, RESIDUAL_EXPORTS, WEIGHT_BITS, example_inputs, exported
from tests.quant.extra import needs

pytestmark = [pytest.mark.quant, needs("torch", "brevitas", "qonnx", "onnxoptimizer")]

PLATFORMS = ("generic-c", "pulp-cluster")
INPUTS = 20

def qonnx_reference(path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """qonnx's executor on the model after qonnx's cleanup (shapes, constant folding), as FINN users run it."""
    from qonnx.core.modelwrapper import ModelWrapper
    from qonnx.core.onnx_exec import execute_onnx
    from qonnx.util.cleanup import cleanup_model

    model = cleanup_model(ModelWrapper(str(path)))
    name, output = model.graph.input[0].name, model.graph.output[0].name
    return [np.asarray(execute_onnx(model, {name: x})[output]) for x in inputs]


def output_step(path: Path) -> float:
    """The quantisation step of the graph output (its last quantiser's scale): the LSB the errors are counted in."""
    model = onnx.load(str(path))
    constants = {tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            constants[node.output[0]] = onnx.numpy_helper.to_array(node.attribute[0].t)
    producers = {name: node for node in model.graph.node for name in node.output}
    node = producers[model.graph.output[0].name]
    while node.op_type in ("Identity", "Reshape", "Flatten"):
        node = producers[node.input[0]]
    assert node.op_type in ("DequantizeLinear", "Quant"), f"the output comes from {node.op_type}"
    return float(np.asarray(constants[node.input[1]]).reshape(-1)[0])


def float_layers(report: dict[str, Any], interface: set[str]) -> list[str]:
    """Layers with a float output, by node name (report.json).

    The DequantizeLinear that produces a float graph output is the network's
    interface (Brevitas models take and return float), not a float layer.
    """
    return [layer["node"] for layer in report["layers"]
            if any(str(output["dtype"]).startswith("float") for output in layer["outputs"])
            and not (layer["op"] == "DequantizeLinear"
                     and {output["name"] for output in layer["outputs"]} <= interface)]


def compile_and_run(path: Path, platform: str, host: PluginHost, work: Path, runtime_cache: Path,
                    inputs: list[np.ndarray]) -> tuple[list[str], list[np.ndarray]]:
    """Compile with the defaults, build once, run every input; returns the float layers and the outputs."""
    _, generated = compile_model(path, CompileOptions(platform=platform), host)
    executable = build_executable(generated, work, Toolchain.from_environment(), runtime_cache)
    name = generated.inputs[0].name
    outputs = [run_network(executable, generated, {name: x}, repeats=1)[0][0] for x in inputs]
    return float_layers(generated.report, {spec.name for spec in generated.outputs}), outputs


def reference(kind: str, path: Path, inputs: list[np.ndarray]) -> list[np.ndarray]:
    if kind.startswith("qonnx"):
        return qonnx_reference(path, inputs)
    name = onnx.load(str(path)).graph.input[0].name
    return [run_reference(path, {name: x})[0] for x in inputs]


def exported_or_fail(kind: str, bits: int | None) -> Path:
    try:
        return exported(kind, bits)
    except Exception as error:  # noqa: BLE001 - brevitas/torch raise many types; the reason is what matters
        pytest.fail(f"Brevitas could not export {kind} with {bits}-bit weights: {type(error).__name__}: {error}")


def compiled_distance(kind: str, path: Path, platform: str, host: PluginHost, tmp_path: Path, cache: Path
                      ) -> tuple[list[str], float]:
    """(float layers, worst distance in output steps) of the compiled network from the reference on INPUTS."""
    inputs = example_inputs(INPUTS)
    floats, actual = compile_and_run(path, platform, host, tmp_path, cache, inputs)
    expected = reference(kind, path, inputs)
    step = output_step(path)
    worst = max(float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))) / step
                for got, want in zip(actual, expected))
    return floats, worst


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("bits", WEIGHT_BITS)
@pytest.mark.parametrize("kind", EXPORTS)
def test_brevitas_export_compiles_and_matches(kind: str, bits: int, platform: str, quant_host: PluginHost,
                                              quant_runtime_cache: Path, tmp_path: Path) -> None:
    path = exported_or_fail(kind, bits)
    floats, worst = compiled_distance(kind, path, platform, quant_host, tmp_path, quant_runtime_cache)
    assert worst == 0.0, f"{kind} w{bits} on {platform}: {worst} LSB off the reference"
    assert not floats, f"{kind} w{bits} on {platform}: float layers {floats}"


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("kind", RESIDUAL_EXPORTS)
def test_brevitas_residual_network_compiles_and_matches(kind: str, platform: str, quant_host: PluginHost,
                                                        quant_runtime_cache: Path, tmp_path: Path) -> None:
    """4-bit per-channel weights, 4-bit activations, QuantEltwiseAdd and TruncAvgPool2d (QONNX's Trunc)."""
    path = exported_or_fail(kind, None)
    floats, worst = compiled_distance(kind, path, platform, quant_host, tmp_path, quant_runtime_cache)
    assert worst == 0.0, f"residual {kind} on {platform}: {worst} LSB off the reference"
    assert not floats, f"residual {kind} on {platform}: float layers {floats}"


def test_exports_hold_the_patterns_the_compiler_lowers() -> None:
    """Each exporter writes what the lowering expects, so a changed exporter shows up here rather than as a miss."""
    histograms = {}
    for kind in EXPORTS:
        model = onnx.load(str(exported_or_fail(kind, 4)))
        histograms[kind] = {f"{node.domain}.{node.op_type}" if node.domain else node.op_type
                            for node in model.graph.node}
    assert "Clip" in histograms["qcdq_torchscript"] and "QuantizeLinear" in histograms["qcdq_torchscript"]
    assert {"QuantizeLinear", "Clip", "DequantizeLinear"} <= histograms["qcdq_dynamo"]
    for kind in ("qonnx_torchscript", "qonnx_dynamo"):
        assert "qonnx.custom_op.general.Quant" in histograms[kind]
        assert not {"QuantizeLinear", "DequantizeLinear"} & histograms[kind]
        residual = onnx.load(str(exported_or_fail(kind, None)))
        assert "Trunc" in {node.op_type for node in residual.graph.node}


@pytest.mark.parametrize("bits", WEIGHT_BITS)
def test_dynamo_qcdq_float_biases_are_quantised_in_fixed_point_mode(bits: int, quant_host: PluginHost,
                                                                    quant_runtime_cache: Path, tmp_path: Path) -> None:
    """Fixed-point mode promises integer arithmetic, not ONNX Runtime's float bias: it quantises the biases.

    Each bias becomes ``round(b / (s_x · s_w))`` in int32, as TFLite's
    converter quantises one, so every layer is integer; the output stays
    within one step of ONNX Runtime's float-bias computation on these inputs.
    """
    path = exported_or_fail("qcdq_dynamo", bits)
    _, generated = compile_model(path, CompileOptions(platform="generic-c", quantization="fixed-point"), quant_host)
    assert not float_layers(generated.report, {spec.name for spec in generated.outputs})
    executable = build_executable(generated, tmp_path, Toolchain.from_environment(), quant_runtime_cache)
    name, step = generated.inputs[0].name, output_step(path)
    inputs = example_inputs(INPUTS)
    actual = [run_network(executable, generated, {name: x}, repeats=1)[0][0] for x in inputs]
    errors = [np.abs(got.astype(np.float64) - want.astype(np.float64)) / step
              for got, want in zip(actual, reference("qcdq_dynamo", path, inputs))]
    assert max(float(np.max(error)) for error in errors) <= 1.0 + 1e-4  # the float output: one step, dequantised
