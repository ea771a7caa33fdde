"""Fused exact-mode QLinear nodes next to the unfused float graph ONNX Runtime runs as their reference.

Each :class:`Case` is one fused node (``requantization="float32"``, optional
``output_min``/``output_max``) on its own graph inputs and output; a whole list
of cases becomes one model, so one compile and one build check dozens of
scales, zero points, shapes and clamps.  :func:`unfused_model` writes the same
cases as DequantizeLinear → op → [Clip] → QuantizeLinear, which ONNX Runtime
runs with graph optimisations off: exactly what exact mode must reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

ELEMENT = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}
FLOAT_OP = {"QLinearAdd": "Add", "QLinearMul": "Mul", "QLinearAveragePool": "AveragePool",
            "QLinearGlobalAveragePool": "GlobalAveragePool", "QLinearSoftmax": "Softmax"}


@dataclass
class Case:
    """One fused node: operand shapes/scales/zero points, output quantisation, attributes, optional clamp."""

    op: str
    shapes: list[tuple[int, ...]]
    scales: list[float]
    zeros: list[int]
    output_shape: tuple[int, ...]
    output_scale: float
    output_zero: int
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.int8))
    attrs: dict[str, object] = field(default_factory=dict)
    clamp: tuple[int, int] | None = None
    """(output_min, output_max) of the fused node; the unfused graph clips the float value at the bounds' values."""


def _initializers(case: Case, index: int) -> list[onnx.TensorProto]:
    tensors = []
    for operand, (scale, zero) in enumerate(zip([*case.scales, case.output_scale], [*case.zeros, case.output_zero])):
        tensors.append(numpy_helper.from_array(np.array(scale, np.float32), f"c{index}_s{operand}"))
        tensors.append(numpy_helper.from_array(np.array(zero, case.dtype), f"c{index}_z{operand}"))
    return tensors


def _io(case: Case, index: int) -> tuple[list[onnx.ValueInfoProto], onnx.ValueInfoProto]:
    element = ELEMENT[np.dtype(case.dtype)]
    inputs = [helper.make_tensor_value_info(f"c{index}_x{operand}", element, list(shape))
              for operand, shape in enumerate(case.shapes)]
    return inputs, helper.make_tensor_value_info(f"c{index}_y", element, list(case.output_shape))


def _model(nodes: list[onnx.NodeProto], inputs: list, outputs: list, initializers: list, name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def fused_model(cases: list[Case]) -> onnx.ModelProto:
    nodes, inputs, outputs, initializers = [], [], [], []
    for index, case in enumerate(cases):
        case_inputs, output = _io(case, index)
        inputs += case_inputs
        outputs.append(output)
        initializers += _initializers(case, index)
        names = []
        for operand in range(len(case.shapes)):
            names += [f"c{index}_x{operand}", f"c{index}_s{operand}", f"c{index}_z{operand}"]
        names += [f"c{index}_s{len(case.shapes)}", f"c{index}_z{len(case.shapes)}"]
        attrs: dict[str, object] = {**case.attrs, "requantization": "float32"}
        if case.op == "QLinearSoftmax":
            attrs.setdefault("opset", 13)
        if case.clamp is not None:
            attrs["output_min"], attrs["output_max"] = case.clamp
        nodes.append(helper.make_node(case.op, names, [f"c{index}_y"], name=f"case{index}", domain="com.microsoft",
                                      **attrs))
    return _model(nodes, inputs, outputs, initializers, "fused")


def unfused_model(cases: list[Case]) -> onnx.ModelProto:
    nodes, inputs, outputs, initializers = [], [], [], []
    for index, case in enumerate(cases):
        case_inputs, output = _io(case, index)
        inputs += case_inputs
        outputs.append(output)
        initializers += _initializers(case, index)
        floats = []
        for operand in range(len(case.shapes)):
            nodes.append(helper.make_node("DequantizeLinear", [f"c{index}_x{operand}", f"c{index}_s{operand}",
                                                              f"c{index}_z{operand}"], [f"c{index}_f{operand}"]))
            floats.append(f"c{index}_f{operand}")
        attrs = {k: v for k, v in case.attrs.items() if k not in ("opset", "channels_last")}
        nodes.append(helper.make_node(FLOAT_OP[case.op], floats, [f"c{index}_r"], **attrs))
        result = f"c{index}_r"
        if case.clamp is not None:
            bounds = [(bound - case.output_zero) * np.float32(case.output_scale) for bound in case.clamp]
            initializers.append(numpy_helper.from_array(np.array(bounds[0], np.float32), f"c{index}_lo"))
            initializers.append(numpy_helper.from_array(np.array(bounds[1], np.float32), f"c{index}_hi"))
            nodes.append(helper.make_node("Clip", [result, f"c{index}_lo", f"c{index}_hi"], [f"c{index}_clipped"]))
            result = f"c{index}_clipped"
        out = len(case.shapes)
        nodes.append(helper.make_node("QuantizeLinear", [result, f"c{index}_s{out}", f"c{index}_z{out}"],
                                      [f"c{index}_y"]))
    return _model(nodes, inputs, outputs, initializers, "unfused")


def random_inputs(cases: list[Case], rng: np.random.Generator) -> dict[str, np.ndarray]:
    feeds = {}
    for index, case in enumerate(cases):
        info = np.iinfo(case.dtype)
        for operand, shape in enumerate(case.shapes):
            feeds[f"c{index}_x{operand}"] = rng.integers(info.min, int(info.max) + 1, shape).astype(case.dtype)
    return feeds


def onnx_runtime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """ONNX Runtime's CPU provider with graph optimisations off (validate's reference)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def compare(cases: list[Case], directory: Path, host: PluginHost, runtime_cache: Path, rounds: int,
            seed: int = 0, options: CompileOptions | None = None) -> tuple[list[int], list[int], dict]:
    """(mismatching elements per case, elements per case, report) over ``rounds`` random input sets."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "fused.onnx"
    onnx.save(fused_model(cases), path)
    _, generated = compile_model(path, options or CompileOptions(platform="generic-c"), host)
    executable = build_executable(generated, directory / "build", Toolchain.from_environment(), runtime_cache)
    reference = unfused_model(cases)
    rng = np.random.default_rng(seed)
    wrong, total = [0] * len(cases), [0] * len(cases)
    for _ in range(rounds):
        feeds = random_inputs(cases, rng)
        actual, _ = run_network(executable, generated, feeds, repeats=1)
        expected = onnx_runtime(reference, feeds)
        for index, (got, want) in enumerate(zip(actual, expected)):
            wrong[index] += int(np.count_nonzero(got.reshape(want.shape) != want))
            total[index] += want.size
    return wrong, total, generated.report
