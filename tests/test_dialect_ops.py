"""Deeploy's integer dialect ops (issue 19, item 2) on generic-c and pulp-cluster, bit-exact with numpy.

Each op is exported the way QuantLib writes it: the default domain, no ONNX schema, float-declared tensors
holding integers; the integer inputs come in through ``input_types``.  The platform declares the op
(``Platform.custom_ops``), so the front end types and shapes it, and the generated C (built with -Werror) must
reproduce the numpy reference written from ``deeploy-op-semantics.md`` exactly: untiled, tiled into a small L1
with single and double buffering, and on the 8-core cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import INT8, INT32
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.basic import integer_mean
from tests.support.dialect_configurations import CONFIGURATIONS


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


def _with_types(options: CompileOptions, names: tuple[str, ...]) -> CompileOptions:
    return CompileOptions(platform=options.platform, level_sizes=dict(options.level_sizes), buffering=options.buffering,
                          cores=options.cores, input_types={name: INT32 for name in names})


# -- IntegerDiv (§4.6) ---------------------------------------------------------------------------------------------

DELTA, EPS, ETA = 65536, 1, 7
A_SHAPE, B_SHAPE = (1, 8, 16), (1, 8, 1)


def integer_div_network(path: Path) -> Path:
    """A [1, 8, 16] ÷ B [1, 8, 1] (one divisor per row, as in an integer layer norm)."""
    node = helper.make_node("IntegerDiv", ["a", "b"], ["y"], name="div", Delta=DELTA, eps=EPS, eta=ETA)
    graph = helper.make_graph([node], "integer_div",
                              [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(A_SHAPE)),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, list(B_SHAPE))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(A_SHAPE))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def integer_div_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """num = Delta·eta·A, den = eta·B + eps, quotient rounded half away from zero (C's truncating division)."""
    num = np.int64(DELTA * ETA) * a.astype(np.int64)
    den = np.int64(ETA) * b.astype(np.int64) + np.int64(EPS)
    half = den >> 1
    biased = num + np.where(num >= 0, half, -half)
    quotient = np.sign(biased) * (np.abs(biased) // den)
    return quotient.astype(np.int32)


def integer_div_inputs() -> dict[str, np.ndarray]:
    """Signed numerators and positive divisors, with rows whose quotients land exactly on .5."""
    rng = np.random.default_rng(19)
    a = rng.integers(-5000, 5000, A_SHAPE).astype(np.int32)
    b = rng.integers(1, 40000, B_SHAPE).astype(np.int32)
    # den = 7·1 + 1 = 8 and num = 458752·a: every quotient is exact or a half, both signs.
    b[0, 0, 0] = 1
    a[0, 0, :] = np.arange(-8, 8, dtype=np.int32)
    return {"a": a, "b": b}


def test_the_reference_rounds_halves_away_from_zero() -> None:
    # 458752·1 / 8 = 57344 exactly; with den = 7·2 + 1 = 15: 458752 / 15 = 30583.47 → 30583, −458752 → −30583.
    assert integer_div_reference(np.array([1, -1], np.int32), np.array([2, 2], np.int32)).tolist() == [30583, -30583]
    # den = 7·5 + 1 = 36: 458752·3 / 36 = 38229.33, 458752 / 36 = 12743.11, and 458752·9/36 = 114688 exactly.
    assert integer_div_reference(np.array([3, 1, 9], np.int32), np.array([5, 5, 5], np.int32)).tolist() == \
        [38229, 12743, 114688]
    # den = 7·3 + 1 = 22 makes 458752·(-1) / 22 = -20852.36 and 458752·11/22 = 229376.
    assert integer_div_reference(np.array([-1, 11], np.int32), np.array([3, 3], np.int32)).tolist() == [-20852, 229376]
    # A true half: num = 458752·1, den = 7·131071 + 1 = 917498 → 0.5000 rounds to 1, −0.5 to −1.
    assert integer_div_reference(np.array([1, -1], np.int32), np.array([131071, 131071], np.int32)).tolist() == [1, -1]


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_integer_div_is_bit_exact(configuration: str, host: PluginHost, tmp_path: Path) -> None:
    model = integer_div_network(tmp_path / "integer_div.onnx")
    inputs = integer_div_inputs()
    expected = integer_div_reference(inputs["a"], inputs["b"])
    options = _with_types(CONFIGURATIONS[configuration], ("a", "b"))
    generated, result = validate_with_data(model, options, host, inputs, [expected], atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "div")
    assert layer["kernel"] == "IntegerDiv integer"
    # 1056 bytes of operands cannot sit in a 512-byte L1 at once: the tiled configurations really tile.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)


@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
def test_supported_ops_lists_the_dialect_ops(platform: str) -> None:
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "supported-ops", "--platform", platform, "--json"],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": platform})
    assert result.returncode == 0, result.stderr
    listed = {row["op"] for row in json.loads(result.stdout)}
    assert {"IntegerDiv", "IntegerMean", "Dequant", "Quant", "DebugPrint"} <= listed


# -- IntegerMean (§3, integer ReduceMean) --------------------------------------------------------------------------

MEAN_CASES: dict[str, tuple[tuple[int, ...], list[int], int]] = {
    "axis 1 of 16, keepdims 0 (half up)": ((4, 16, 12), [1], 0),
    "axis -1 of 12, keepdims 1 (half away)": ((4, 12, 24), [-1], 1),
}


def integer_mean_network(path: Path, shape: tuple[int, ...], axes: list[int], keepdims: int) -> Path:
    """One IntegerMean over ``axes`` as QuantLib exports it (float-declared tensors)."""
    node = helper.make_node("IntegerMean", ["x"], ["y"], name="mean", axes=axes, keepdims=keepdims)
    rank = len(shape)
    reduced = {axis % rank for axis in axes}
    out = [1 if axis in reduced else dim for axis, dim in enumerate(shape)] if keepdims else \
        [dim for axis, dim in enumerate(shape) if axis not in reduced]
    graph = helper.make_graph([node], "integer_mean", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def integer_mean_reference(x: np.ndarray, axes: list[int], keepdims: int) -> np.ndarray:
    """Exact sum S of N elements; (S + N/2) >> log2 N for keepdims=0 and N = 2^k, else S/N rounded half away from 0."""
    total = x.astype(np.int64).sum(axis=tuple(axes), keepdims=bool(keepdims))
    count = int(np.prod([x.shape[axis] for axis in axes]))
    if not keepdims and count & (count - 1) == 0:
        shift = count.bit_length() - 1
        result = (total + (1 << (shift - 1) if shift else 0)) >> shift
    else:
        biased = total + np.where(total >= 0, count // 2, -(count // 2))
        result = np.sign(biased) * (np.abs(biased) // count)
    return result.astype(x.dtype)


def test_the_mean_reference_rounds_as_deeploy_does() -> None:
    # keepdims=0, N=2: -3/2 = -1.5 rounds half up to -1; keepdims=1, N=2: half away gives -2.
    assert integer_mean_reference(np.array([[-1, -2]], np.int8), [1], 0).tolist() == [-1]
    assert integer_mean_reference(np.array([[-1, -2]], np.int8), [1], 1).tolist() == [[-2]]
    # N=3 (never a power of two): 4/3 → 1, 5/3 → 2, -5/3 → -2.
    assert integer_mean_reference(np.array([[1, 1, 2], [1, 2, 2], [-1, -2, -2]], np.int8), [1], 0).tolist() == [1, 2, -2]


def test_the_networks_glue_reference_agrees_with_the_mean_reference() -> None:
    # The networks' IntegerMean (tests/dialect_reference/basic.py) was written separately from this file's
    # reference; on negative sums and exact halves both must agree element for element.
    rng = np.random.default_rng(19)
    ties = rng.integers(-128, 128, (3, 16, 6)).astype(np.int8)
    ties[0, :, 0] = np.repeat(np.array([-1, -2], np.int8), 8)  # a sum of -24 over 16: exactly -1.5
    for axes, keepdims in (((1,), 0), ((1,), 1), ((2,), 0), ((1, 2), 0)):
        assert np.array_equal(integer_mean(ties, axes, bool(keepdims)),
                              integer_mean_reference(ties, list(axes), keepdims).astype(np.int64))


@pytest.mark.parametrize("case", list(MEAN_CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_integer_mean_is_bit_exact(configuration: str, case: str, host: PluginHost, tmp_path: Path) -> None:
    shape, axes, keepdims = MEAN_CASES[case]
    model = integer_mean_network(tmp_path / "integer_mean.onnx", shape, axes, keepdims)
    x = np.random.default_rng(19).integers(-128, 128, shape).astype(np.int8)
    expected = integer_mean_reference(x, [axis % len(shape) for axis in axes], keepdims)
    options = _with_types(CONFIGURATIONS[configuration], ())
    options.input_types["x"] = INT8
    generated, result = validate_with_data(model, options, host, {"x": x}, [expected], atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "mean")
    assert layer["kernel"] == "IntegerMean integer"
    assert layer["outputs"][0]["shape"] == list(expected.shape)
    # The input (768 or 1152 bytes) exceeds the 512-byte L1: the tiler cuts the kept axes, the reduced axis stays whole.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)


# -- Dequant (§5.2) ------------------------------------------------------------------------------------------------

DEQUANT_SHAPE, DEQUANT_SCALE, DEQUANT_ZERO_POINT = (1, 8, 40), 0.0078125 * 3, -5.0


def dequant_network(path: Path) -> Path:
    """One Dequant (scale, zero_point attributes) as QuantLib exports it: float-declared integers in, float32 out."""
    node = helper.make_node("Dequant", ["q"], ["y"], name="dequant", scale=DEQUANT_SCALE, zero_point=DEQUANT_ZERO_POINT,
                            bit_width=8, signed=1)
    graph = helper.make_graph([node], "dequant", [helper.make_tensor_value_info("q", TensorProto.FLOAT, list(DEQUANT_SHAPE))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(DEQUANT_SHAPE))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def dequant_reference(q: np.ndarray) -> np.ndarray:
    """float32(float32(q - zp) * s), every step in float32."""
    return ((q.astype(np.float32) - np.float32(DEQUANT_ZERO_POINT)) * np.float32(DEQUANT_SCALE)).astype(np.float32)


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_dequant_is_bit_exact(configuration: str, host: PluginHost, tmp_path: Path) -> None:
    model = dequant_network(tmp_path / "dequant.onnx")
    q = np.random.default_rng(19).integers(-128, 128, DEQUANT_SHAPE).astype(np.int8)
    options = _with_types(CONFIGURATIONS[configuration], ())
    options.input_types["q"] = INT8
    generated, result = validate_with_data(model, options, host, {"q": q}, [dequant_reference(q)], atol=0.0, rtol=0.0,
                                           repeats=1, toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "dequant")
    assert layer["kernel"] == "Dequant integer to float32"
    # 320 int8 bytes in and 1280 float bytes out exceed the 512-byte L1: the tiled configurations cut it.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)


# -- Quant (§5.1) --------------------------------------------------------------------------------------------------

QUANT_SHAPE = (1, 8, 40)
QUANT_CASES: dict[str, tuple[float, float, int, int]] = {
    "signed 8 bit": (64.0, 0.0, 8, 1),
    "unsigned 4 bit, zero point 3": (8.0, 3.0, 4, 0),
}


def quant_network(path: Path, scale: float, zero_point: float, bit_width: int, signed: int) -> Path:
    """One Quant (reciprocal scale, zero point, bit width, signedness) on a float input; the output declared int8.

    A float-declared Quant output is not typed int8 yet (the integer type inference starts from integer inputs
    only), so this network declares the int8 the op produces.
    """
    node = helper.make_node("Quant", ["x"], ["q"], name="quant", scale=scale, zero_point=zero_point,
                            bit_width=bit_width, signed=signed)
    graph = helper.make_graph([node], "quant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(QUANT_SHAPE))],
                              [helper.make_tensor_value_info("q", TensorProto.INT8, list(QUANT_SHAPE))])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def quant_reference(x: np.ndarray, scale: float, zero_point: float, bit_width: int, signed: int) -> np.ndarray:
    """float32 multiply and add, round half away from zero, clamp to the bit width's range."""
    v = (x.astype(np.float32) * np.float32(scale)).astype(np.float32)
    v = (v + np.float32(zero_point)).astype(np.float32)
    q = np.trunc((v + np.float32(0.5) * np.sign(v)).astype(np.float32))
    low, high = (-(1 << (bit_width - 1)), (1 << (bit_width - 1)) - 1) if signed else (0, (1 << bit_width) - 1)
    return np.clip(q, low, high).astype(np.int8)


def quant_inputs() -> np.ndarray:
    """Values spanning past both bounds, with exact halves (x*scale = k + 0.5) of both signs."""
    x = np.random.default_rng(19).uniform(-3.0, 3.0, QUANT_SHAPE).astype(np.float32)
    x[0, 0, :8] = np.array([0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.0, -0.0], np.float32) / 8
    return x


def test_the_quant_reference_rounds_half_away_and_clamps() -> None:
    x = np.array([0.5, -0.5, 1.5, -1.5, 200.0, -200.0], np.float32)
    assert quant_reference(x, 1.0, 0.0, 8, 1).tolist() == [1, -1, 2, -2, 127, -128]
    assert quant_reference(x, 1.0, 3.0, 4, 0).tolist() == [4, 3, 5, 2, 15, 0]


@pytest.mark.parametrize("case", list(QUANT_CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_quant_is_bit_exact(configuration: str, case: str, host: PluginHost, tmp_path: Path) -> None:
    scale, zero_point, bit_width, signed = QUANT_CASES[case]
    model = quant_network(tmp_path / "quant.onnx", scale, zero_point, bit_width, signed)
    x = quant_inputs()
    expected = quant_reference(x, scale, zero_point, bit_width, signed)
    options = _with_types(CONFIGURATIONS[configuration], ())
    generated, result = validate_with_data(model, options, host, {"x": x}, [expected], atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "quant")
    assert layer["kernel"] == "Quant float32 to int8"
    # 1280 float bytes in and 320 int8 bytes out exceed the 512-byte L1: the tiled configurations cut it.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)


# -- DebugPrint (a documented no-op) -------------------------------------------------------------------------------

def debug_print_network(path: Path) -> Path:
    """x → DebugPrint → y: the output must be the input, bit for bit."""
    nodes = [helper.make_node("DebugPrint", ["x"], ["y"], name="print")]
    graph = helper.make_graph(nodes, "debug_print", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.parametrize("integer", [False, True], ids=["float32", "int8"])
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_debug_print_passes_its_input_through(configuration: str, integer: bool, host: PluginHost, tmp_path: Path) -> None:
    model = debug_print_network(tmp_path / "debug_print.onnx")
    rng = np.random.default_rng(19)
    x = rng.integers(-64, 64, (1, 32, 16)).astype(np.int8) if integer else rng.standard_normal((1, 32, 16)).astype(np.float32)
    options = _with_types(CONFIGURATIONS[configuration], ())
    if integer:
        options.input_types["x"] = INT8
    elif "L1" in configuration:
        options.level_sizes["L1"] = 1024  # the tiler's smallest double-buffered float tiles need 730 bytes
    expected = x.copy()
    generated, result = validate_with_data(model, options, host, {"x": x}, [expected], atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "print")
    assert layer["kernel"] == "DebugPrint no-op copy"
    # 512 or 2048 bytes in and as many out exceed the 512-byte L1: the tiled configurations cut it.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)
