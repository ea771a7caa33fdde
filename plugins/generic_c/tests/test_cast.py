"""Type-changing Cast and CastLike: every documented result, with C's undefined cases caught by UBSan.

ONNX's own Cast node tests only convert between float types.  Here one
model per source type converts edge values (NaN, infinities, out-of-range,
negative, fractional, float16 subnormals and ties) into every carried type;
the program is built with ``-fsanitize=undefined,float-cast-overflow``, so a
conversion C leaves undefined fails the build's run instead of passing by luck.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

TARGETS = {
    "int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "int16": TensorProto.INT16, "uint16": TensorProto.UINT16,
    "int32": TensorProto.INT32, "uint32": TensorProto.UINT32, "int64": TensorProto.INT64, "uint64": TensorProto.UINT64,
    "bool": TensorProto.BOOL, "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT,
    "float64": TensorProto.DOUBLE,
}
SANITIZED = ("-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")


def _float_to_int(values: np.ndarray, target: str) -> np.ndarray:
    """The documented float -> integer rule: truncate toward zero, saturate out of range, NaN -> 0."""
    info = np.iinfo(np.dtype(target))
    results = [0 if np.isnan(value) else info.min if value <= info.min else info.max if value >= info.max
               else int(value) for value in values.astype(np.float64).tolist()]
    return np.array(results, dtype=np.dtype(target))


def expected(values: np.ndarray, target: str) -> np.ndarray:
    """What Cast to ``target`` must give for ``values`` (see ops/cast.py)."""
    if target == "bool":
        return values != 0
    if np.issubdtype(values.dtype, np.floating) and target not in ("float16", "float32", "float64"):
        return _float_to_int(values, target)
    with np.errstate(over="ignore", invalid="ignore"):
        return values.astype(np.dtype(target))


def _casts_of(source: int, values: np.ndarray, path: Path) -> Path:
    """One input of ``source`` type cast to every target (the source's own type left out: that is a view)."""
    targets = {name: code for name, code in TARGETS.items() if code != source}
    nodes = [helper.make_node("Cast", ["x"], [f"to_{name}"], name=f"cast_{name}", to=code)
             for name, code in targets.items()]
    graph = helper.make_graph(nodes, "casts", [helper.make_tensor_value_info("x", source, list(values.shape))],
                              [helper.make_tensor_value_info(f"to_{name}", code, list(values.shape))
                               for name, code in targets.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    return path


def _run(model: Path, values: np.ndarray, host: PluginHost, work: Path, cache: Path) -> dict[str, np.ndarray]:
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), host)
    kernels = {layer["kernel"] for layer in generated.report["layers"]}
    assert kernels == {"Cast converting"}, kernels
    executable = build_executable(generated, work / "build", Toolchain.from_environment(SANITIZED), cache)
    actual, _ = run_network(executable, generated, {"x": values}, repeats=1)
    return {spec.name.removeprefix("to_"): array for spec, array in zip(generated.outputs, actual)}


def _same(got: np.ndarray, want: np.ndarray, what: str) -> None:
    got, want = np.asarray(got).reshape(want.shape), np.asarray(want)
    if np.issubdtype(want.dtype, np.floating):
        assert got.dtype == want.dtype, what
        bits = f"uint{want.dtype.itemsize * 8}"
        same = (got.view(bits) == want.view(bits)) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (what, got[~same], want[~same])
    else:
        assert np.array_equal(got.astype(want.dtype), want), (what, got, want)


FLOAT_EDGES = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.7, -2.7, 127.9, 128.0, -128.9, -129.0, 255.9, 256.0, 300.0,
               -1.0, 65504.0, 65519.99, 65520.0, 1e10, -1e10, 3e38, -3e38, 2.0 ** 63, -(2.0 ** 63), 2.0 ** 64,
               6e-8, 2.0 ** -25, 3 * 2.0 ** -26, 1e-8, 2049.0, 2051.0, 1.00048828125,
               float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("source", ["float32", "float64"])
def test_floats_convert_to_every_type_with_nan_and_out_of_range_defined(
    source: str, tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    values = np.array(FLOAT_EDGES + ([1e300, -1e300, 2.0 ** -140] if source == "float64" else []), dtype=source)
    code = TensorProto.FLOAT if source == "float32" else TensorProto.DOUBLE
    outputs = _run(_casts_of(code, values, tmp_path / "casts.onnx"), values, generic_c_host, tmp_path, runtime_cache)
    for target, got in outputs.items():
        _same(got, expected(values, target), f"{source} -> {target}")


def test_integers_wrap_and_bools_are_zero_or_one(tmp_path: Path, generic_c_host: PluginHost,
                                                 runtime_cache: Path) -> None:
    values = np.array([0, 1, -1, 127, 128, -129, 255, 256, 65535, 65536, -32769, 2**31, -(2**31) - 1,
                       2**53 + 1, -(2**63), 2**63 - 1, 70000], dtype=np.int64)
    outputs = _run(_casts_of(TensorProto.INT64, values, tmp_path / "casts.onnx"), values, generic_c_host, tmp_path,
                   runtime_cache)
    for target, got in outputs.items():
        _same(got, expected(values, target), f"int64 -> {target}")


def test_float16_reads_exactly_including_subnormals_infinities_and_nan(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    every_pattern = np.arange(0, 1 << 16, 37, dtype=np.uint32).astype(np.uint16).view(np.float16)
    values = np.concatenate([every_pattern, np.array([0x0001, 0x03ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x8001],
                                                     dtype=np.uint16).view(np.float16)])
    outputs = _run(_casts_of(TensorProto.FLOAT16, values, tmp_path / "casts.onnx"), values, generic_c_host, tmp_path,
                   runtime_cache)
    for target, got in outputs.items():
        _same(got, expected(values, target), f"float16 -> {target}")


def test_castlike_takes_the_type_of_a_float16_constant_and_float16_weights_are_bit_patterns(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    """CastLike's second input is only a type; a float16 initializer is written as its bits (Concat moves it)."""
    weights = np.array([1.5, -0.0, 65504.0, 6e-8], dtype=np.float16)
    nodes = [helper.make_node("CastLike", ["x", "like"], ["half"], name="castlike"),
             helper.make_node("Concat", ["half", "w"], ["joined"], name="concat", axis=0),
             helper.make_node("Cast", ["joined"], ["y"], name="back", to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "castlike", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])],
                              initializer=[numpy_helper.from_array(np.zeros(1, np.float16), "like"),
                                           numpy_helper.from_array(weights, "w")])
    path = tmp_path / "castlike.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(SANITIZED), runtime_cache)
    x = np.array([0.1, -70000.0, 1.0009765625 + 2.0 ** -11], dtype=np.float32)
    (got,), _ = run_network(executable, generated, {"x": x}, repeats=1)
    with np.errstate(over="ignore"):
        want = np.concatenate([x.astype(np.float16), weights]).astype(np.float32)
    _same(got, want, "CastLike and float16 weights")


def test_saturate_only_concerns_float8_so_both_values_give_the_same_saturating_code(
    tmp_path: Path, generic_c_host: PluginHost
) -> None:
    """ONNX's ``saturate`` applies to float8 targets only; a float -> int8 Cast saturates (as documented) either way."""
    generated_files = []
    for saturate in (0, 1):
        node = helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.INT8, saturate=saturate)
        graph = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                                  [helper.make_tensor_value_info("y", TensorProto.INT8, [4])])
        (tmp_path / str(saturate)).mkdir()
        path = tmp_path / str(saturate) / "cast.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
        _, generated = compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
        generated_files.append(generated.files)
    assert generated_files[0] == generated_files[1]
    assert any("dcg_f64_to_i8(" in text for text in generated_files[0].values())


def test_float16_moves_through_views_and_copies_but_any_type_arithmetic_refuses_it(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    """float16 is uint16_t bits in C: Transpose/Concat/Cast take it (moves_storage_types), while a kernel for "any"
    float such as QuantizeLinear refuses it instead of computing on the bits."""
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             helper.make_node("Concat", ["t", "w"], ["y"], axis=0)]
    graph = helper.make_graph(nodes, "moves", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 2])],
                              initializer=[numpy_helper.from_array(np.array([[1.5, -2.0]], np.float16), "w")])
    path = tmp_path / "moves.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    _, result = validate_model(path, CompileOptions(platform="generic-c"), generic_c_host, atol=0.0,
                               cache_dir=runtime_cache)
    assert result.ok, [(c.max_abs_error, c.scale) for c in result.comparisons]

    quantize = helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["q"], name="quantize")
    graph = helper.make_graph([quantize], "quantize", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4])],
                              [helper.make_tensor_value_info("q", TensorProto.INT8, [4])],
                              initializer=[numpy_helper.from_array(np.array(0.5, np.float16), "scale"),
                                           numpy_helper.from_array(np.array(0, np.int8), "zero")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), path)
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    assert "input 0 is float16, which the kernel does not compute on" in error.value.nodes[0].describe()
