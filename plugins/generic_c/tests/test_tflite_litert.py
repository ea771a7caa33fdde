"""Fixed-point mode against LiteRT itself: single-layer int8 TFLite models, 0 LSB on every output.

(``global_average``, TFLite's MEAN, is checked through the numpy model only: the QDQ lowering does not fuse
tf2onnx's ReduceMean into QLinearGlobalAveragePool yet, whose fixed-point kernel computes MEAN.)

Each model (tflite_layer_models.py: Conv with a fused Relu, a strided Conv,
depthwise Conv with Relu6, Dense per channel with Relu, per tensor and without
bias, Add + Relu, Mul, AveragePool with SAME and VALID padding, Softmax at two
input scales) is quantised by TFLiteConverter to full int8,
converted by ``tf2onnx --tflite``, compiled with ``--quantization
fixed-point`` and run on random int8 inputs; LiteRT's reference kernels
(``OpResolverType.BUILTIN_REF``, the arithmetic fixed-point mode promises) run
the ``.tflite`` on the same inputs.  Every output must be equal, and the layer
must have compiled to a TFLite-arithmetic integer kernel (a float fallback
that happened to agree would prove nothing about the kernels).

A second test holds the numpy model of TFLite's arithmetic
(deeploy_generic_c.parsing.tflite_arithmetic), which test_tflite_kernels.py uses
as its reference, to LiteRT on the same models with inputs chosen to reach the
edges (softmax rows with equal maxima, values beyond its radius).

Needs the ``quant`` extra (TensorFlow, tf2onnx, ai-edge-litert); skipped with
the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.parsing import tflite_arithmetic as tfl

from plugins.generic_c.tests import tflite_layer_models

for _module, _why in (("tensorflow", "the TFLite models need TensorFlow"), ("tf2onnx", "converting .tflite to ONNX "
                                                                          "needs tf2onnx")):
    if importlib.util.find_spec(_module) is None:  # the conversion runs in a child: no need to import it here
        pytest.skip(f"{_why} (the quant extra: pip install -e '.[quant]')", allow_module_level=True)
litert = pytest.importorskip("ai_edge_litert.interpreter",
                             reason="the reference is LiteRT (ai-edge-litert, the quant extra: pip install -e '.[quant]')")

pytestmark = pytest.mark.quant
ROUNDS = 20
MAIN_OP = {"conv_relu": "QLinearConv", "conv_strided": "QLinearConv", "depthwise_relu6": "QLinearConv",
           "dense_relu": "QGemm", "dense_per_tensor": "QGemm", "dense_no_bias": "QLinearMatMul", "add_relu": "QLinearAdd", "mul": "QLinearMul", "avgpool_same": "QLinearAveragePool",
           "avgpool_valid": "QLinearAveragePool", "softmax": "QLinearSoftmax",
           "softmax_wide": "QLinearSoftmax"}


@pytest.fixture(scope="module")
def models() -> Path:
    return tflite_layer_models.converted()


def _interpreter(path: Path, preserve: bool = False) -> Any:
    interpreter = litert.Interpreter(model_path=str(path), num_threads=1,
                                     experimental_op_resolver_type=litert.OpResolverType.BUILTIN_REF,
                                     experimental_preserve_all_tensors=preserve)
    interpreter.allocate_tensors()
    return interpreter


def _litert(interpreter: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], value)
    interpreter.invoke()
    return [interpreter.get_tensor(detail["index"]).copy() for detail in interpreter.get_output_details()]


def _random_inputs(interpreter: Any, rng: np.random.Generator, round_index: int) -> list[np.ndarray]:
    """Uniform over int8, every third round a narrow band (equal values: ties in averages, equal softmax maxima)."""
    values = []
    for detail in interpreter.get_input_details():
        shape = tuple(int(d) for d in detail["shape"])
        if round_index % 3 == 2:
            centre = int(rng.integers(-128, 128))
            values.append(np.clip(rng.integers(centre - 2, centre + 3, shape), -128, 127).astype(np.int8))
        else:
            values.append(rng.integers(-128, 128, shape).astype(np.int8))
    return values


def _kernels(report: dict[str, Any]) -> dict[str, str]:
    """Op type → requantisation arithmetic of every layer in report.json (``"float"`` for a float layer)."""
    found: dict[str, str] = {}
    for layer in report.get("layers", []):
        arithmetic = (layer.get("requantization") or {}).get("arithmetic", "none")
        found[str(layer.get("op") or layer.get("op_type"))] = str(arithmetic)
    return found


@pytest.mark.parametrize("name", [name for name in tflite_layer_models.MODELS if name in MAIN_OP])
def test_layer_equals_litert(name: str, models: Path, generic_c_host: PluginHost, runtime_cache: Path,
                             tmp_path: Path) -> None:
    _, generated = compile_model(models / f"{name}.onnx",
                                 CompileOptions(platform="generic-c", quantization="fixed-point"), generic_c_host)
    kernels = _kernels(generated.report)
    assert kernels.get(MAIN_OP[name]) == "tflite", json.dumps(generated.report.get("layers"), indent=1)[:3000]
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    interpreter = _interpreter(models / f"{name}.tflite")
    rng = np.random.default_rng(11)
    wrong, total = 0, 0
    for round_index in range(ROUNDS):
        inputs = _random_inputs(interpreter, rng, round_index)
        expected = _litert(interpreter, inputs)
        feeds = {spec.name: value for spec, value in zip(generated.inputs, inputs)}
        actual, _ = run_network(executable, generated, feeds, repeats=1)
        for got, want in zip(actual, expected):
            wrong += int(np.count_nonzero(got.reshape(want.shape).astype(np.int64) != want))
            total += want.size
    assert total > 0 and wrong == 0, f"{wrong} of {total} elements differ from LiteRT"


def _quantisation(detail: dict[str, Any]) -> tuple[float, int]:
    scale, zero = detail["quantization"]
    return float(scale), int(zero)


def _op_tensors(interpreter: Any, op_name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(input tensor details, output tensor detail) of the model's one ``op_name`` operator."""
    details = {detail["index"]: detail for detail in interpreter.get_tensor_details()}
    (op,) = [op for op in interpreter._get_ops_details() if op["op_name"] == op_name]
    return [details[index] for index in op["inputs"] if index >= 0], details[op["outputs"][0]]


def test_numpy_model_equals_litert(models: Path) -> None:
    """The numpy model of Add, Mul, the pools and Softmax against LiteRT on many inputs, edges included.

    The operator's own input and output tensors are read back from the
    interpreter, so the comparison does not depend on how inputs reach it.
    """
    rng = np.random.default_rng(12)
    wrong: dict[str, int] = {}
    for name, op_name in (("add_relu", "ADD"), ("mul", "MUL"), ("avgpool_same", "AVERAGE_POOL_2D"),
                          ("avgpool_valid", "AVERAGE_POOL_2D"), ("global_average", "MEAN"), ("softmax", "SOFTMAX"),
                          ("softmax_wide", "SOFTMAX")):
        interpreter = _interpreter(models / f"{name}.tflite", preserve=True)
        inputs_detail, output_detail = _op_tensors(interpreter, op_name)
        so, zo = _quantisation(output_detail)
        low, high = tfl.activation_range(0.0 if name == "add_relu" else None, None, so, zo, np.dtype(np.int8))
        wrong[name] = 0
        for round_index in range(60):
            inputs = _random_inputs(interpreter, rng, round_index)
            if name.startswith("softmax") and round_index % 4 == 3:  # several equal maxima, the rest far below the radius
                inputs[0][:] = -128
                inputs[0][0, rng.integers(0, inputs[0].shape[1], 3)] = 127
            _litert(interpreter, inputs)
            x = [interpreter.get_tensor(detail["index"]) for detail in inputs_detail]
            got = interpreter.get_tensor(output_detail["index"])
            if name in ("add_relu", "mul"):
                (s1, z1), (s2, z2) = (_quantisation(detail) for detail in inputs_detail[:2])
                if name == "add_relu":
                    want = tfl.add(x[0], z1, x[1], z2, tfl.add_parameters(s1, s2, so), zo, low, high)
                else:
                    multiplier, shift = tfl.mul_parameters(s1, s2, so)
                    want = tfl.mul(x[0], z1, x[1], z2, multiplier, shift, zo, low, high)
            elif name == "global_average":  # NHWC, mean over H and W
                multiplier, shift = tfl.mean_parameters(_quantisation(inputs_detail[0])[0], so,
                                                        x[0].shape[1] * x[0].shape[2])
                want = tfl.mean(x[0], (1, 2), _quantisation(inputs_detail[0])[1], multiplier, shift, zo, low, high)
                want = want.reshape(got.shape)
            elif name.startswith("softmax"):
                want = tfl.softmax(x[0], tfl.softmax_parameters(_quantisation(inputs_detail[0])[0]), np.int8)
            else:
                pads = (1, 1, 1, 1) if name == "avgpool_same" else (0, 0, 0, 0)  # 9 → 5 with k3 s2: one each side
                pooled = tfl.average_pool(x[0].transpose(0, 3, 1, 2), (3, 3) if name == "avgpool_same" else (2, 2),
                                          (2, 2), pads, low, high)
                want = pooled.transpose(0, 2, 3, 1)
            wrong[name] += int(np.count_nonzero(want != got))
    assert wrong == {name: 0 for name in wrong}


def _conv_accumulators(interpreter: Any, op: dict[str, Any], details: dict[int, dict[str, Any]]) -> np.ndarray:
    """int32 accumulators of a stride-1 SAME Conv/DepthwiseConv (NHWC) from LiteRT's own tensors."""
    x_index, w_index, b_index = op["inputs"][:3]
    zero = int(details[x_index]["quantization"][1])
    x = interpreter.get_tensor(x_index).astype(np.int64) - zero
    w = interpreter.get_tensor(w_index).astype(np.int64)
    kh, kw = w.shape[1:3]
    padded = np.pad(x, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2), (0, 0)))
    height, width = x.shape[1:3]
    acc = np.zeros((*x.shape[:3], w.shape[0] if op["op_name"] == "CONV_2D" else w.shape[3]), np.int64)
    for ky in range(kh):
        for kx in range(kw):
            patch = padded[:, ky:ky + height, kx:kx + width, :]
            acc += np.einsum("nhwc,mc->nhwm", patch, w[:, ky, kx, :]) if op["op_name"] == "CONV_2D" \
                else patch * w[0, ky, kx, :]
    return acc + interpreter.get_tensor(b_index).astype(np.int64)


@pytest.mark.parametrize(("name", "op_name", "rounding"), [
    ("conv_relu", "CONV_2D", "double"), ("depthwise_relu6", "DEPTHWISE_CONV_2D", "double"),
    ("dense_relu", "FULLY_CONNECTED", "single"), ("dense_per_tensor", "FULLY_CONNECTED", "single"),
    ("dense_no_bias", "FULLY_CONNECTED", "single"),
])
def test_requantisation_rounding_equals_litert(name: str, op_name: str, rounding: str, models: Path) -> None:
    """LiteRT's convolutions round twice, its FullyConnected once: each model against both, on many inputs.

    The other rounding must disagree somewhere (the inputs reach enough
    ties), so the agreement is not an accident of inputs without ties.
    """
    interpreter = _interpreter(models / f"{name}.tflite", preserve=True)
    details = {detail["index"]: detail for detail in interpreter.get_tensor_details()}
    (op,) = [op for op in interpreter._get_ops_details() if op["op_name"] == op_name]
    x_detail, w_detail, out_detail = details[op["inputs"][0]], details[op["inputs"][1]], details[op["outputs"][0]]
    multipliers, shifts = (np.array(v) for v in tfl.linear_multipliers(
        _quantisation(x_detail)[0], w_detail["quantization_parameters"]["scales"], _quantisation(out_detail)[0]))
    zero = _quantisation(out_detail)[1]
    rng = np.random.default_rng(14)
    wrong = {"double": 0, "single": 0}
    for round_index in range(100):
        _litert(interpreter, _random_inputs(interpreter, rng, round_index))
        if op_name == "FULLY_CONNECTED":
            x = interpreter.get_tensor(op["inputs"][0]).astype(np.int64) - _quantisation(x_detail)[1]
            acc = x @ interpreter.get_tensor(op["inputs"][1]).astype(np.int64).T
            if op["inputs"][2] >= 0:
                acc = acc + interpreter.get_tensor(op["inputs"][2]).astype(np.int64)
        else:
            acc = _conv_accumulators(interpreter, op, details)
        got = interpreter.get_tensor(op["outputs"][0]).astype(np.int64)
        channels = np.broadcast_to(np.arange(acc.shape[-1]) if multipliers.size > 1 else 0, acc.shape)
        inside = (got > -128) & (got < 127)  # where no activation clamp hides the rounding
        for kind in wrong:
            want = tfl.requantize(acc, multipliers[channels], shifts[channels], zero, -128, 127, rounding=kind)
            wrong[kind] += int(np.count_nonzero((want != got) & inside))
    other = "single" if rounding == "double" else "double"
    assert wrong[rounding] == 0 and wrong[other] > 0, wrong
