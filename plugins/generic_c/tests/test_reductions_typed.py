"""Reductions, arg/top-k and normalisations beyond ONNX's node tests: integer wrapping, bool, NaN and infinities,
ties, options the node tests leave at their defaults, and the one-line refusals.

ONNX's node tests of these ops are float32 (plus float64 LogSumExp and bool
Max/Min); the conformance suites run them.  Here one model per concern runs
many nodes at once, built with UBSan so that an integer overflow or an
out-of-range conversion in the generated C fails the run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

SANITIZED = ("-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")


def _tensor(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))


def _run(nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray], expected: dict[str, np.ndarray],
         host: PluginHost, work: Path, cache: Path, constants: dict[str, np.ndarray] | None = None,
         platform: str = "generic-c", **options: object) -> dict[str, np.ndarray]:
    graph = helper.make_graph(nodes, "reductions", [_tensor(n, a) for n, a in inputs.items()],
                              [_tensor(n, a) for n, a in expected.items()],
                              [numpy_helper.from_array(a, n) for n, a in (constants or {}).items()])
    path = work / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)]), path)
    _, generated = compile_model(path, CompileOptions(platform=platform, **options), host)  # type: ignore[arg-type]
    toolchain = Toolchain.from_environment(SANITIZED if platform == "generic-c" else ())
    executable = build_executable(generated, work / "build", toolchain, cache)
    actual, _ = run_network(executable, generated, {spec.name: inputs[spec.name] for spec in generated.inputs},
                            repeats=1)
    return {spec.name: np.reshape(got, expected[spec.name].shape) for spec, got in zip(generated.outputs, actual)}


def _axes(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def _wrap(values: np.ndarray, dtype: str) -> np.ndarray:
    """Python integers modulo 2**bits as ``dtype`` (numpy's and ONNX's integer results)."""
    bits = np.dtype(dtype).itemsize * 8
    exact = np.array(values, dtype=object)  # Python integers: no float64 rounding of large sums
    return np.array([int(v) % (1 << bits) for v in exact.ravel()], dtype=f"uint{bits}").view(dtype).reshape(
        exact.shape)


def test_integer_reductions_wrap_and_bools_are_any_all(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    i32 = np.array([[-(2**31), -(2**31), 2**30, 5], [-7, 0, 2, 3], [2**31 - 1, 2**31 - 1, 2**31 - 1, 1]],
                   dtype=np.int32)
    u32 = np.array([[2**32 - 1, 300, 2], [70000, 70000, 1]], dtype=np.uint32)
    i64 = np.array([[2**62, 2**62, 1], [2**62, -(2**63), 3]], dtype=np.int64)
    i8 = np.array([[-128, 5], [127, -3]], dtype=np.int8)
    flags = np.array([[0, 1, 0], [0, 0, 0], [1, 1, 1]], dtype=np.bool_)
    rows = [[int(v) for v in row] for row in i32.tolist()]
    expected = {
        "l1_32": _wrap([[sum(abs(v) for v in row)] for row in rows], "int32"),
        "prod32": _wrap([np.prod(row, dtype=object) for row in rows], "int32"),
        "square_u32": _wrap([sum(int(v) ** 2 for v in row) for row in u32.tolist()], "uint32"),
        "prod_u32": _wrap([np.prod([int(v) for v in row], dtype=object) for row in u32.tolist()], "uint32"),
        "sum64": _wrap([sum(col) for col in zip(*i64.tolist())], "int64").reshape(1, 3),
        "max8": i8.max(axis=0),
        "min64": i64.min(axis=1, keepdims=True),
        "any": flags.any(axis=1),
        "all": flags.all(axis=1),
        "copy": i64,
    }
    nodes = [
        helper.make_node("ReduceL1", ["i32", "ax1"], ["l1_32"]),
        helper.make_node("ReduceProd", ["i32", "ax1"], ["prod32"], keepdims=0),
        helper.make_node("ReduceSumSquare", ["u32", "ax1"], ["square_u32"], keepdims=0),
        helper.make_node("ReduceProd", ["u32", "ax1"], ["prod_u32"], keepdims=0),
        helper.make_node("ReduceSum", ["i64", "ax0"], ["sum64"]),
        helper.make_node("ReduceMax", ["i8", "ax0"], ["max8"], keepdims=0),
        helper.make_node("ReduceMin", ["i64", "axm1"], ["min64"]),
        helper.make_node("ReduceMax", ["flags", "ax1"], ["any"], keepdims=0),
        helper.make_node("ReduceMin", ["flags", "ax1"], ["all"], keepdims=0),
        helper.make_node("ReduceSum", ["i64", "none"], ["copy"], noop_with_empty_axes=1),
    ]
    constants = {"ax0": _axes(0), "ax1": _axes(1), "axm1": _axes(-1), "none": _axes()}
    got = _run(nodes, {"i32": i32, "u32": u32, "i64": i64, "i8": i8, "flags": flags}, expected, generic_c_host, tmp_path,
               runtime_cache, constants)
    for name, want in expected.items():
        assert np.array_equal(got[name].astype(want.dtype), want), (name, got[name], want)


def test_arg_and_top_k_ties_nan_and_every_option(tmp_path: Path, generic_c_host: PluginHost,
                                                   runtime_cache: Path) -> None:
    nan = np.nan
    x = np.array([[1.0, nan, 3.0, nan], [2.0, 5.0, 5.0, -1.0], [0.0, 0.0, -4.0, -4.0]], dtype=np.float32)
    ties = np.array([[3, 1, 3, 1, 2], [-5, -5, 7, 7, 7]], dtype=np.int16)
    expected = {
        "first_max": np.array([1, 1, 0], dtype=np.int64),  # the first NaN wins, as numpy's argmax
        "last_max": np.array([[3], [2], [1]], dtype=np.int64),
        "first_min": np.array([[2, 0, 2, 0]], dtype=np.int64),  # NaN columns: the NaN is the minimum
        "last_min": np.array([3, 1], dtype=np.int64),
        "top_values": np.array([[nan, nan], [5.0, 5.0], [0.0, 0.0]], dtype=np.float32),
        "top_indices": np.array([[1, 3], [1, 2], [0, 1]], dtype=np.int64),
        "low_values": np.array([[1, 1, 2], [-5, -5, 7]], dtype=np.int16),
        "low_indices": np.array([[1, 3, 4], [0, 1, 2]], dtype=np.int64),
        "col_values": np.array([[3, 1, 7, 7, 7]], dtype=np.int16),
        "col_indices": np.array([[0, 0, 1, 1, 1]], dtype=np.int64),
    }
    nodes = [
        helper.make_node("ArgMax", ["x"], ["first_max"], axis=1, keepdims=0),
        helper.make_node("ArgMax", ["x"], ["last_max"], axis=-1, select_last_index=1),
        helper.make_node("ArgMin", ["x"], ["first_min"], axis=0),
        helper.make_node("ArgMin", ["ties"], ["last_min"], axis=1, keepdims=0, select_last_index=1),
        helper.make_node("TopK", ["x", "two"], ["top_values", "top_indices"], axis=1),
        helper.make_node("TopK", ["ties", "three"], ["low_values", "low_indices"], axis=-1, largest=0, sorted=0),
        helper.make_node("TopK", ["ties", "one"], ["col_values", "col_indices"], axis=0),
    ]
    constants = {"one": _axes(1), "two": _axes(2), "three": _axes(3)}
    got = _run(nodes, {"x": x, "ties": ties}, expected, generic_c_host, tmp_path, runtime_cache, constants)
    for name, want in expected.items():
        assert np.array_equal(got[name], want, equal_nan=want.dtype.kind == "f"), (name, got[name], want)


def test_float_reductions_and_rows_stay_finite_and_keep_nan(tmp_path: Path, generic_c_host: PluginHost,
                                                           runtime_cache: Path) -> None:
    inf = np.inf
    x = np.array([[1000.0, 1000.0, -3.0], [-inf, -inf, -inf], [inf, 1.0, 2.0], [0.0, 0.0, 0.0]], dtype=np.float32)
    d = np.array([[1e-3, 2.5, -7.0], [3.0, -4.0, 0.5]], dtype=np.float64)
    with np.errstate(divide="ignore"):
        expected = {
            "lse": np.array([1000.0 + np.log(2.0), -inf, inf, np.log(3.0)], dtype=np.float32),
            "log_softmax": np.array([[-np.log(2.0), -np.log(2.0), -1003.0 - np.log(2.0)]], dtype=np.float32),
            "hard": np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]],
                             dtype=np.float32),
            "lp1": np.array([[1e-3, 2.5, -7.0], [3.0, -4.0, 0.5]]) / np.array([[9.501], [7.5]]),
            "lp2_rows0": (x[3:4] * 0).astype(np.float32),
            "l2": np.sqrt((d * d).sum(axis=0, keepdims=True)),
            "log_sum": np.log(np.abs(d).sum(axis=1)),  # of |d|, a second input
            "square": (d * d).sum(axis=1, keepdims=True),
            "mean": d.mean(axis=(0, 1), keepdims=True),
            "lse_one": d[:, :1],  # a reduced axis of length one: two passes over one element each
        }
    nodes = [
        helper.make_node("ReduceLogSumExp", ["x", "ax1"], ["lse"], keepdims=0),
        helper.make_node("Slice", ["x", "s0", "s1", "ax0"], ["first"]),
        helper.make_node("LogSoftmax", ["first"], ["log_softmax"]),
        helper.make_node("Hardmax", ["x"], ["hard"], axis=1),
        helper.make_node("LpNormalization", ["d"], ["lp1"], p=1, axis=1),
        helper.make_node("Slice", ["x", "s3", "s4", "ax0"], ["zeros"]),
        helper.make_node("LpNormalization", ["zeros"], ["lp2_rows0"], axis=-1),
        helper.make_node("ReduceL2", ["d", "ax0"], ["l2"]),
        helper.make_node("ReduceLogSum", ["abs_d", "ax1"], ["log_sum"], keepdims=0),
        helper.make_node("ReduceSumSquare", ["d", "axm1"], ["square"]),
        helper.make_node("ReduceMean", ["d"], ["mean"]),
        helper.make_node("Slice", ["d", "s0", "s1", "ax1"], ["d_first"]),
        helper.make_node("ReduceLogSumExp", ["d_first", "ax1"], ["lse_one"]),
    ]
    constants = {"ax0": _axes(0), "ax1": _axes(1), "axm1": _axes(-1), "s0": _axes(0), "s1": _axes(1),
                 "s3": _axes(3), "s4": _axes(4)}
    got = _run(nodes, {"x": x, "d": d, "abs_d": np.abs(d)}, expected, generic_c_host, tmp_path, runtime_cache, constants)
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-6, atol=1e-6, err_msg=name)


def test_normalisations_with_statistics_options_and_pools(tmp_path: Path, generic_c_host: PluginHost,
                                                          runtime_cache: Path) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((3, 4)).astype(np.float32)
    one = np.array([1.5], dtype=np.float32)
    rows = x.reshape(2, 12).astype(np.float64)
    mean = rows.mean(axis=1, keepdims=True)
    inverse = 1.0 / np.sqrt(rows.var(axis=1, keepdims=True) + 0.25)
    signal = rng.standard_normal((1, 2, 7)).astype(np.float32)
    padded = np.pad(np.abs(signal.astype(np.float64)), ((0, 0), (0, 0), (1, 1)))
    pooled = np.stack([padded[..., i:i + 5:2].sum(axis=-1) for i in range(0, 5, 3)], axis=-1)
    mvn_mean = x.mean(axis=1, keepdims=True)
    expected = {
        "ln": ((rows - mean) * inverse).reshape(x.shape) * scale,
        "ln_mean": mean.reshape(2, 1, 1),
        "ln_inverse": inverse.reshape(2, 1, 1),
        "rms": x / np.sqrt((x.astype(np.float64) ** 2).mean(axis=-1, keepdims=True) + 0.5) * 1.5,
        "lp_pool": pooled,
        "global_lp": np.cbrt((np.abs(x.astype(np.float64)) ** 3).sum(axis=-1, keepdims=True)),
        "mvn": (x - mvn_mean) / (np.sqrt(((x - mvn_mean) ** 2).mean(axis=1, keepdims=True)) + 1e-9),
    }
    expected = {name: value.astype(np.float32) for name, value in expected.items()}
    nodes = [
        helper.make_node("LayerNormalization", ["x", "scale"], ["ln", "ln_mean", "ln_inverse"], axis=1, epsilon=0.25),
        helper.make_node("RMSNormalization", ["x", "one"], ["rms"], epsilon=0.5),
        helper.make_node("LpPool", ["signal"], ["lp_pool"], kernel_shape=[3], p=1, pads=[1, 1], strides=[3],
                         dilations=[2]),
        helper.make_node("GlobalLpPool", ["x"], ["global_lp"], p=3),
        helper.make_node("MeanVarianceNormalization", ["x"], ["mvn"], axes=[1]),
    ]
    got = _run(nodes, {"x": x, "signal": signal}, expected, generic_c_host, tmp_path, runtime_cache,
               {"scale": scale, "one": one})
    for name, want in expected.items():
        np.testing.assert_allclose(got[name], want, rtol=1e-5, atol=1e-5, err_msg=name)


@pytest.mark.parametrize("node, inputs, constants, shape, reason", [
    (helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2], p=0), {"x": np.zeros((1, 2, 3), np.float32)}, {},
     [1, 2, 2], "p=0 is not supported"),
    (helper.make_node("LpNormalization", ["x"], ["y"], p=3), {"x": np.zeros((2, 3), np.float32)}, {}, [2, 3],
     "p=3 is not supported"),
    (helper.make_node("ReduceL2", ["x", "a"], ["y"]), {"x": np.zeros((2, 3), np.int32)}, {"a": _axes(1)},
     [2, 1], "the kernel takes float32 or float64"),
])
def test_refusals_name_the_reason(node: onnx.NodeProto, inputs: dict[str, np.ndarray],
                                  constants: dict[str, np.ndarray], shape: list[int], reason: str, tmp_path: Path,
                                  generic_c_host: PluginHost) -> None:
    model = helper.make_model(helper.make_graph(
        [node], "refused", [_tensor(n, a) for n, a in inputs.items()],
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(inputs["x"].dtype if index == 0
                                                                              else np.dtype(np.int64)), shape)
         for index, name in enumerate(node.output)],
        [numpy_helper.from_array(a, n) for n, a in constants.items()]), opset_imports=[helper.make_opsetid("", 23)])
    path = tmp_path / "refused.onnx"
    onnx.save(model, path)
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    assert reason in error.value.nodes[0].describe()
