"""Fused nodes with ``requantization="tflite"`` and the numpy model of TFLite's kernel for each, for tests.

Each :class:`Case` is one com.microsoft node (QLinearAdd, QLinearMul, the
average pools, QLinearSoftmax) on its own graph inputs and output; a list of
cases becomes one model, so one compile and one build check dozens of
scales, zero points, shapes and clamps (generic-c, and pulp-cluster tiled).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.parsing import tflite_arithmetic as tfl
from plugins.generic_c.tests import fused_cases
from plugins.generic_c.tests.fused_cases import Case


def fused_model(cases: list[Case]) -> onnx.ModelProto:
    """Every case as one com.microsoft node with ``requantization="tflite"`` on graph inputs and outputs."""
    return fused_cases.fused_model(cases, "tflite", "tflite_cases")


def _range(case: Case) -> tuple[int, int]:
    info = np.iinfo(case.dtype)
    return case.clamp if case.clamp is not None else (int(info.min), int(info.max))


def _pool_reference(case: Case, x: np.ndarray) -> np.ndarray:
    """TFLite's average (pixels inside the input); with count_include_pad=1, padding counts as the zero point."""
    low, high = _range(case)
    if case.op == "QLinearGlobalAveragePool":  # TFLite's MEAN over the spatial axes
        channels_last = bool(case.attrs.get("channels_last", 0))
        axes = tuple(range(1, x.ndim - 1)) if channels_last else tuple(range(2, x.ndim))
        count = int(np.prod([x.shape[axis] for axis in axes]))
        multiplier, shift = tfl.mean_parameters(case.scales[0], case.output_scale, count)
        return tfl.mean(x, axes, case.zeros[0], multiplier, shift, case.output_zero, low, high)
    kernel = tuple(case.attrs["kernel_shape"])
    strides = tuple(case.attrs.get("strides", (1, 1)))
    pads = tuple(case.attrs.get("pads", (0, 0, 0, 0)))
    if not case.attrs.get("count_include_pad", 0):
        return tfl.average_pool(x, kernel, strides, (pads[0], pads[1], pads[2], pads[3]), low, high)
    padded = np.pad(x.astype(np.int64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])),
                    constant_values=case.zeros[0])
    return tfl.average_pool(padded, kernel, strides, (0, 0, 0, 0), low, high)


def _softmax_reference(case: Case, x: np.ndarray) -> np.ndarray:
    parameters = tfl.softmax_parameters(case.scales[0])
    axis = int(case.attrs.get("axis", -1)) % x.ndim
    if int(case.attrs.get("opset", 13)) < 13:
        rows = x.reshape(int(np.prod(x.shape[:axis])), -1)
        result = tfl.softmax(rows, parameters, case.dtype).reshape(x.shape)
    else:
        result = np.moveaxis(tfl.softmax(np.moveaxis(x, axis, -1), parameters, case.dtype), -1, axis)
    low, high = _range(case)
    return np.clip(result, low, high)


def reference(case: Case, operands: list[np.ndarray]) -> np.ndarray:
    """The numpy model of TFLite's kernel for ``case``."""
    low, high = _range(case)
    if case.op == "QLinearAdd":
        parameters = tfl.add_parameters(case.scales[0], case.scales[1], case.output_scale)
        return tfl.add(operands[0], case.zeros[0], operands[1], case.zeros[1], parameters, case.output_zero, low, high)
    if case.op == "QLinearMul":
        multiplier, shift = tfl.mul_parameters(case.scales[0], case.scales[1], case.output_scale)
        return tfl.mul(operands[0], case.zeros[0], operands[1], case.zeros[1], multiplier, shift, case.output_zero,
                       low, high)
    if case.op == "QLinearSoftmax":
        return _softmax_reference(case, operands[0])
    return _pool_reference(case, operands[0])


def run_cases(cases: list[Case], directory: Path, host: PluginHost, runtime_cache: Path, rounds: int,
              seed: int = 0, options: CompileOptions | None = None) -> tuple[list[int], dict]:
    """(mismatching elements per case, report) over ``rounds`` random input sets; inputs span the whole type."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "fused.onnx"
    onnx.save(fused_model(cases), path)
    options = options or CompileOptions(platform="generic-c", quantization="fixed-point")
    _, generated = compile_model(path, options, host)
    executable = build_executable(generated, directory / "build", Toolchain.from_environment(), runtime_cache)
    rng = np.random.default_rng(seed)
    wrong = [0] * len(cases)
    for round_index in range(rounds):
        feeds, operands = {}, []
        for index, case in enumerate(cases):
            info = np.iinfo(case.dtype)
            values = []
            for operand, shape in enumerate(case.shapes):
                if round_index % 3 == 2:  # a narrow band: many equal values and exact ties in averages
                    centre = int(rng.integers(info.min, int(info.max) + 1))
                    band = rng.integers(centre - 2, centre + 3, shape)
                    value = np.clip(band, info.min, info.max).astype(case.dtype)
                else:
                    value = rng.integers(info.min, int(info.max) + 1, shape).astype(case.dtype)
                feeds[f"c{index}_x{operand}"] = value
                values.append(value)
            operands.append(values)
        actual, _ = run_network(executable, generated, feeds, repeats=1)
        for index, (case, got) in enumerate(zip(cases, actual)):
            want = reference(case, operands[index])
            wrong[index] += int(np.count_nonzero(got.reshape(want.shape) != want))
    return wrong, generated.report


U8 = np.dtype(np.uint8)

CASES = [
    Case("QLinearAdd", [(1, 4, 5, 6), (1, 4, 5, 6)], [0.05, 0.1], [3, -7], (1, 4, 5, 6), 0.12, -2),
    Case("QLinearAdd", [(1, 4, 5, 6), (1, 4, 1, 1)], [0.0271, 0.0543], [-128, -4], (1, 4, 5, 6), 0.0278, -128,
         clamp=(-128, 127)),
    Case("QLinearAdd", [(2, 3, 7), (7,)], [0.02, 0.013], [5, -20], (2, 3, 7), 0.017, 10, clamp=(10, 100)),
    Case("QLinearAdd", [(3, 8), (3, 8)], [0.3, 0.3], [128, 120], (3, 8), 0.0015, 128, dtype=U8),  # saturates often
    Case("QLinearMul", [(1, 4, 5, 6), (1, 4, 5, 6)], [0.05, 0.1], [3, -7], (1, 4, 5, 6), 0.3, 0),
    Case("QLinearMul", [(2, 6), (1, 6)], [0.5, 0.4], [0, 9], (2, 6), 0.01, -5, clamp=(-5, 127)),  # multiplier 20
    Case("QLinearMul", [(4, 5), (4, 5)], [0.02, 0.03], [100, 130], (4, 5), 0.05, 128, dtype=U8),
    Case("QLinearAveragePool", [(1, 3, 7, 7)], [0.0675], [-13], (1, 3, 4, 4), 0.0675, -13,
         attrs={"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # TFLite's SAME padding
    Case("QLinearAveragePool", [(1, 2, 6, 5)], [0.1], [7], (1, 2, 6, 5), 0.1, 7,
         attrs={"kernel_shape": [2, 3], "pads": [0, 1, 1, 1], "count_include_pad": 1}),
    Case("QLinearAveragePool", [(1, 4, 8, 8)], [0.04], [-128], (1, 4, 1, 1), 0.04, -128,
         attrs={"kernel_shape": [8, 8], "strides": [8, 8]}),  # ResNet-8's last pool
    Case("QLinearAveragePool", [(1, 2, 6, 6)], [0.04], [100], (1, 2, 3, 3), 0.04, 100, dtype=U8,
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, clamp=(100, 200)),
    Case("QLinearGlobalAveragePool", [(1, 8, 5, 5)], [0.05], [-3], (1, 8, 1, 1), 0.05, -3),
    Case("QLinearGlobalAveragePool", [(2, 3, 4, 6)], [0.05], [12], (2, 3, 1, 1), 0.05, 12, dtype=U8),
    Case("QLinearGlobalAveragePool", [(1, 16, 5, 5)], [0.0316], [-128], (1, 16, 1, 1), 0.00581, -128),  # rescales
    Case("QLinearGlobalAveragePool", [(1, 6, 7, 24)], [0.02], [-128], (1, 1, 1, 24), 0.003, -20,
         attrs={"channels_last": 1}, clamp=(-20, 127)),  # tf2onnx's NHWC
    Case("QLinearSoftmax", [(2, 37)], [0.0376], [-5], (2, 37), 1 / 256, -128, attrs={"axis": -1, "opset": 13}),
    Case("QLinearSoftmax", [(3, 10)], [0.5], [0], (3, 10), 1 / 256, -128, attrs={"axis": 1, "opset": 13}),  # radius 31
    Case("QLinearSoftmax", [(1, 1000)], [0.1], [20], (1, 1000), 1 / 256, -128, attrs={"axis": -1, "opset": 13}),
    Case("QLinearSoftmax", [(2, 5, 3)], [0.08], [0], (2, 5, 3), 1 / 256, -128, attrs={"axis": 1, "opset": 13}),
    Case("QLinearSoftmax", [(2, 3, 4)], [0.02], [0], (2, 3, 4), 1 / 256, -128, attrs={"axis": 1, "opset": 11}),
    Case("QLinearSoftmax", [(4, 12)], [0.003], [128], (4, 12), 1 / 256, 0, dtype=U8, attrs={"axis": -1, "opset": 13}),
    Case("QLinearSoftmax", [(2, 9)], [0.2], [0], (2, 9), 1 / 256, -128, attrs={"axis": -1, "opset": 13},
         clamp=(-100, 90)),
]
