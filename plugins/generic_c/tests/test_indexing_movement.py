"""Indexing and data-movement ops for every element type C carries, and what they do with bad indices.

ONNX's node tests run these ops on float32, int32, int64 or double only.
Here one model applies every op (with negative indices, int32 and int64
indices, steps, axes and every scatter reduction) to one run-time input of
each carried type, checked against ONNX's reference evaluator; the program
is built with UBSan, so integer reductions that overflow must wrap without
undefined behaviour.  Run-time indices outside their axis are clamped (the
documented rule of ops/movement/gather_scatter.py), constant ones are refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

SANITIZED = ("-O0", "-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")
"""UBSan catches undefined behaviour at any optimisation level; -O0 builds the 300-layer model in seconds."""
TYPES = ("float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool")
SHAPE = (2, 4, 2, 2)


def _values(dtype: str, shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Random values over the type's whole range (so that integer sums and products overflow)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.startswith("float"):
        return rng.normal(0, 10, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


class _Graph:
    """Nodes, constants and outputs of the test model, names prefixed per element type."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.constants: list[onnx.TensorProto] = []
        self.outputs: list[str] = []

    def constant(self, name: str, value: np.ndarray) -> str:
        self.constants.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], name: str, **attributes: Any) -> None:
        self.nodes.append(helper.make_node(op_type, inputs, [name], name=name, **attributes))
        self.outputs.append(name)


def _every_op(graph: _Graph, dtype: str) -> None:
    """Every op of the family on input ``x_<dtype>`` of shape [2, 4, 2, 2]."""
    p, x = dtype, f"x_{dtype}"
    c = graph.constant
    i64 = np.int64
    graph.op("Tile", [x, c(f"{p}_reps", np.array([1, 1, 2, 3], i64))], f"{p}_tile")
    graph.op("Expand", [x, c(f"{p}_shape", np.array([3, 1, 4, 2, 2], i64))], f"{p}_expand")
    graph.op("Trilu", [x, c(f"{p}_k", np.array(1, i64))], f"{p}_tril", upper=0)
    graph.op("Trilu", [x], f"{p}_triu")
    graph.op("Transpose", [x], f"{p}_transpose", perm=[3, 1, 0, 2])
    graph.op("Concat", [x, x], f"{p}_concat", axis=-2)
    graph.op("Slice", [x, c(f"{p}_st", np.array([-1, 1], i64)), c(f"{p}_en", np.array([-100, 2], i64)),
                       c(f"{p}_ax", np.array([1, -1], i64)), c(f"{p}_sp", np.array([-2, 1], i64))], f"{p}_slice")
    pads = c(f"{p}_pads", np.array([0, 1, 1, 2, 0, 2, 0, 1], i64))
    graph.op("Pad", [x, pads], f"{p}_pad_wrap", mode="wrap")
    graph.op("Pad", [x, pads, c(f"{p}_pad_value", _values(dtype, (), 7))], f"{p}_pad_constant")
    graph.op("Gather", [x, c(f"{p}_g32", np.array([[-1, 0], [2, 1]], np.int32))], f"{p}_gather32", axis=1)
    element_indices = np.array([-1, 0, 3, 1, 2, -4, 0, 1] * 2, i64).reshape(2, 2, 2, 2)
    graph.op("GatherElements", [x, c(f"{p}_ge", element_indices)], f"{p}_gather_elements", axis=-3)
    graph.op("GatherND", [x, c(f"{p}_gnd", np.array([[[3, -1]], [[0, 1]]], i64))], f"{p}_gathernd",
             batch_dims=1)
    scatter_indices = c(f"{p}_se", np.array([[[[1]], [[0]], [[1]], [[1]]]] * 2, i64).reshape(2, 4, 1, 1))
    scatter_updates = c(f"{p}_su", _values(dtype, (2, 4, 1, 1), 3))
    for reduction in ("none", "max"):
        graph.op("ScatterElements", [x, scatter_indices, scatter_updates], f"{p}_scatter_elements_{reduction}",
                 axis=-1, reduction=reduction)
    nd_indices = c(f"{p}_snd", np.array([[0, 1], [1, -1], [0, 1]], i64))
    nd_updates = c(f"{p}_sndu", _values(dtype, (3, 2, 2), 4))
    for reduction in ("add", "mul", "min"):
        graph.op("ScatterND", [x, nd_indices, nd_updates], f"{p}_scatternd_{reduction}", reduction=reduction)
    graph.op("ScatterND", [x, c(f"{p}_snd1", np.array([[1, 2]], i64)), c(f"{p}_sndu1", _values(dtype, (1, 2, 2), 5))],
             f"{p}_scatternd_none")
    graph.op("DepthToSpace", [x], f"{p}_d2s_crd", blocksize=2, mode="CRD")
    graph.op("SpaceToDepth", [x], f"{p}_s2d", blocksize=2)
    graph.op("ReverseSequence", [x, c(f"{p}_lens", np.array([3, 1], i64))], f"{p}_reverse", batch_axis=0,
             time_axis=1)
    graph.op("Compress", [x, c(f"{p}_cond", np.array([1, 0, 1], bool))], f"{p}_compress", axis=1)
    graph.op("Flatten", [x], f"{p}_flatten", axis=2)
    if dtype in ("float32", "float64", "int32", "uint32", "int64", "uint64"):  # CumSum's schema types
        graph.op("CumSum", [x, c(f"{p}_axis", np.array(1, np.int32))], f"{p}_cumsum", exclusive=1, reverse=1)


def _compile_and_run(model: onnx.ModelProto, feeds: dict[str, np.ndarray], host: PluginHost, work: Path,
                     cache: Path) -> dict[str, np.ndarray]:
    path = work / "model.onnx"
    onnx.save(model, path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), host)
    executable = build_executable(generated, work / "build", Toolchain.from_environment(SANITIZED), cache)
    actual, _ = run_network(executable, generated, {spec.name: feeds[spec.name] for spec in generated.inputs},
                            repeats=1)
    return {spec.name: array for spec, array in zip(generated.outputs, actual)}


def _model(graph: _Graph, inputs: dict[str, np.ndarray]) -> onnx.ModelProto:
    value_infos = [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))
                   for name, array in inputs.items()]
    made = helper.make_graph(graph.nodes, "indexing", value_infos,
                             [helper.make_empty_tensor_value_info(name) for name in graph.outputs],
                             initializer=graph.constants)
    model = helper.make_model(made, opset_imports=[helper.make_opsetid("", 21)])
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del inferred.graph.output[:]
    known = {value.name: value for value in inferred.graph.value_info}
    inferred.graph.output.extend(known[name] for name in graph.outputs)
    return inferred


def _with_output_shapes(model: onnx.ModelProto, expected: dict[str, np.ndarray]) -> onnx.ModelProto:
    """The outputs declared with the reference's shapes: Compress's depends on its (constant) condition's values,
    which ONNX's shape inference does not read, as the node tests declare it."""
    del model.graph.output[:]
    del model.graph.value_info[:]
    model.graph.output.extend(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype),
                                                            list(array.shape)) for name, array in expected.items())
    return model


def _assert_same(actual: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    for name, want in expected.items():
        got = np.asarray(actual[name]).reshape(want.shape)
        if want.dtype.kind == "f":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=0, err_msg=name)
        else:
            assert np.array_equal(got.astype(want.dtype), want), (name, got, want)


def test_every_op_moves_every_carried_type(tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    graph = _Graph()
    feeds = {f"x_{dtype}": _values(dtype, SHAPE, index) for index, dtype in enumerate(TYPES)}
    for dtype in TYPES:
        _every_op(graph, dtype)
    model = _model(graph, feeds)
    with np.errstate(over="ignore"):
        expected = dict(zip(graph.outputs, ReferenceEvaluator(model).run(None, feeds)))
    model = _with_output_shapes(model, expected)
    _assert_same(_compile_and_run(model, feeds, generic_c_host, tmp_path, runtime_cache), expected)


def _clamped(indices: np.ndarray, length: int) -> np.ndarray:
    """The documented rule: negative indices count from the end, then clamp to the axis."""
    return np.clip(np.where(indices < 0, indices + length, indices), 0, length - 1)


def test_run_time_indices_outside_their_axis_are_clamped(tmp_path: Path, generic_c_host: PluginHost,
                                                         runtime_cache: Path) -> None:
    """Indices fed at run time: negative ones count from the end, beyond the axis they read its nearest end."""
    data = np.arange(24, dtype=np.int16).reshape(2, 3, 4)
    bad: dict[str, np.ndarray] = {
        "gather": np.array([7, -9, -1, 2], np.int32), "elements": np.array([[[5], [-7], [1]]] * 2, np.int64),
        "nd": np.array([[9, -1], [-8, 2]], np.int64), "scatter": np.array([[[40, -40, 2, -1]]] * 2, np.int32),
        "lens": np.array([9, -3], np.int64)}
    graph = _Graph()
    graph.op("Gather", ["data", "gather"], "gathered", axis=2)
    graph.op("GatherElements", ["data", "elements"], "elements_out", axis=2)
    graph.op("GatherND", ["data", "nd"], "nd_out")
    graph.op("ScatterElements", ["data", "scatter", graph.constant("updates", -np.ones((2, 1, 4), np.int16))],
             "scattered", axis=1, reduction="add")
    graph.op("ReverseSequence", ["data", "lens"], "reversed", batch_axis=0, time_axis=2)
    feeds = {"data": data, **bad}
    model = _model(graph, feeds)
    clamped = {"data": data, "gather": _clamped(bad["gather"], 4), "elements": _clamped(bad["elements"], 4),
               "nd": np.stack([_clamped(bad["nd"][:, 0], 2), _clamped(bad["nd"][:, 1], 3)], axis=1),
               "scatter": _clamped(bad["scatter"], 3), "lens": np.clip(bad["lens"], 0, 4)}
    expected = dict(zip(graph.outputs, ReferenceEvaluator(model).run(None, clamped)))
    _assert_same(_compile_and_run(model, feeds, generic_c_host, tmp_path, runtime_cache), expected)


def test_one_hot_reads_run_time_indices_of_any_type(tmp_path: Path, generic_c_host: PluginHost,
                                                    runtime_cache: Path) -> None:
    """Float indices truncate toward zero; NaN, infinities and indices outside [-depth, depth) give an all-off row."""
    floats = np.array([[0.0, 2.9, -1.0, -3.5], [np.nan, np.inf, -np.inf, 1e30]], np.float32)
    small = np.array([[1, -1, 3, -4], [-3, 0, 127, -128]], np.int8)
    large = np.array([[0, 1, 2, 3], [2**63, 2**64 - 1, 2**64 - 3, 2]], np.uint64)
    graph = _Graph()
    depth, values = graph.constant("depth", np.array(3.0, np.float32)), graph.constant("values", np.array([-5, 7], np.int16))
    graph.op("OneHot", ["floats", depth, values], "from_floats", axis=0)
    graph.op("OneHot", ["small", depth, values], "from_int8")
    graph.op("OneHot", ["large", depth, values], "from_uint64", axis=-2)
    model = _model(graph, {"floats": floats, "small": small, "large": large})
    truncated = np.where(np.isfinite(floats) & (np.abs(floats) < 10), floats, 99).astype(np.int64)
    expected = dict(zip(graph.outputs, ReferenceEvaluator(model).run(None, {"floats": truncated.astype(np.float32),
                                                                           "small": small, "large": large})))
    _assert_same(_compile_and_run(model, {"floats": floats, "small": small, "large": large}, generic_c_host,
                                  tmp_path, runtime_cache), expected)


@pytest.mark.parametrize("op, inputs, attributes", [
    ("GatherElements", {"indices": np.array([[4, 0]], np.int64)}, {"axis": 1}),
    ("GatherND", {"indices": np.array([[2, 0]], np.int64)}, {}),
])
def test_constant_indices_outside_the_axis_are_refused(op: str, inputs: dict[str, np.ndarray],
                                                       attributes: dict[str, Any], tmp_path: Path,
                                                       generic_c_host: PluginHost) -> None:
    graph = _Graph()
    graph.op(op, ["data", graph.constant("indices", inputs["indices"])], "y", **attributes)
    model = _model(graph, {"data": np.zeros((2, 4), np.float32)})
    path = tmp_path / "model.onnx"
    onnx.save(model, path)
    with pytest.raises(Exception, match="out of range for an axis of"):
        compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
