"""Fused exact-mode QLinear nodes next to the unfused float graph ONNX Runtime runs as their reference.

Each :class:`Case` is one fused node (``requantization="float32"``, optional
``output_min``/``output_max``) on its own graph inputs and output; a whole list
of cases becomes one model, so one compile and one build check dozens of
scales, zero points, shapes and clamps.  :func:`unfused_model` writes the same
cases as DequantizeLinear → op → [Clip] → QuantizeLinear, which ONNX Runtime
runs with graph optimisations off: exactly what exact mode must reproduce.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from plugins.generic_c.tests import fused_cases
from plugins.generic_c.tests.fused_cases import Case

FLOAT_OP = {"QLinearAdd": "Add", "QLinearMul": "Mul", "QLinearAveragePool": "AveragePool",
            "QLinearGlobalAveragePool": "GlobalAveragePool", "QLinearSoftmax": "Softmax"}


def fused_model(cases: list[Case]) -> onnx.ModelProto:
    """Every case as one node with ``requantization="float32"`` (QLinearSoftmax: ``opset`` 13 unless set)."""
    return fused_cases.fused_model(cases, "float32", "fused", {"QLinearSoftmax": {"opset": 13}})


def unfused_model(cases: list[Case]) -> onnx.ModelProto:
    nodes, inputs, outputs, initializers = [], [], [], []
    for index, case in enumerate(cases):
        case_inputs, output = fused_cases.graph_io(case, index)
        inputs += case_inputs
        outputs.append(output)
        initializers += fused_cases.initializers(case, index)
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
    return fused_cases.model(nodes, inputs, outputs, initializers, "unfused")


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
