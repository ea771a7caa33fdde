"""The typed element-wise families where ONNX's node tests do not reach: integer overflow and the results this
plugin defines where C has none (division and modulo by zero, MIN / -1, negative integer powers, float to
integer saturation), signed BitShift and float Mod with fmod=0 (their node tests are opset 28, which the
front end cannot convert), several broadcast operands, float64 activations with their attributes, and the
refusals of bad attributes.  Each test is one small model, compared exactly with numpy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import ADDRESS_SANITIZER_FLAGS, strict_flags
from deeploy_core.validate import Toolchain

STRICT = Toolchain.from_environment(extra_flags=strict_flags(ADDRESS_SANITIZER_FLAGS))
"""Warnings are errors and UBSan aborts on any undefined behaviour: the point of these kernels' guards."""

OPSET = 18


def _model(path: Path, nodes: list[onnx.NodeProto], inputs: dict[str, np.ndarray],
           outputs: dict[str, np.ndarray], opset: int = OPSET) -> Path:
    def info(name: str, array: np.ndarray) -> onnx.ValueInfoProto:
        return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape))

    graph = helper.make_graph(nodes, "typed", [info(name, array) for name, array in inputs.items()],
                              [info(name, array) for name, array in outputs.items()])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def _check(host: PluginHost, runtime_cache: Path, path: Path, inputs: dict[str, np.ndarray],
           outputs: dict[str, np.ndarray], atol: float = 0.0, rtol: float = 0.0) -> str:
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, inputs,
                                           list(outputs.values()), atol=atol, rtol=rtol, cache_dir=runtime_cache,
                                           toolchain=STRICT)
    for comparison, (name, expected) in zip(result.comparisons, outputs.items()):
        assert comparison.ok, (name, comparison)
    return generated.files["Network.c"]


def _truncated_division(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C's quotient (toward zero) with this plugin's definitions: by zero 0, MIN / -1 wraps to MIN."""
    wide_a, wide_b = a.astype(object), b.astype(object)
    quotient = [0 if y == 0 else (abs(x) // abs(y)) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(wide_a, wide_b)]
    return np.array([int(q) for q in quotient], dtype=object)


def _wrap(values: np.ndarray, dtype: np.dtype) -> np.ndarray:
    bits = np.dtype(dtype).itemsize * 8
    wrapped = [int(v) % (1 << bits) for v in values]
    if np.dtype(dtype).kind == "i":
        wrapped = [v - (1 << bits) if v >= 1 << (bits - 1) else v for v in wrapped]
    return np.array(wrapped, dtype=dtype)


@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int64])
def test_integer_arithmetic_wraps_and_defines_division_by_zero(dtype: type, generic_c_host: PluginHost,
                                                               runtime_cache: Path, tmp_path: Path) -> None:
    info = np.iinfo(dtype)
    a = np.array([info.max, info.min, info.min, 7, -7 if info.min < 0 else 200, 5, info.max, 0], dtype=dtype)
    b = np.array([1, -1 if info.min < 0 else 1, 1, 0, 3, -3 if info.min < 0 else 9, info.max, 0], dtype=dtype)
    wide_a, wide_b = a.astype(object), b.astype(object)
    quotient = _truncated_division(a, b)
    c_remainder = np.array([0 if y == 0 else x - y * q for x, y, q in zip(wide_a, wide_b, quotient)], dtype=object)
    numpy_remainder = np.array([0 if y == 0 else x % y for x, y in zip(wide_a, wide_b)], dtype=object)
    outputs = {
        "add": _wrap(wide_a + wide_b, dtype), "sub": _wrap(wide_a - wide_b, dtype), "mul": _wrap(wide_a * wide_b, dtype),
        "div": _wrap(quotient, dtype), "mod": _wrap(numpy_remainder, dtype), "fmod": _wrap(c_remainder, dtype),
        "neg": _wrap(-wide_a, dtype), "abs": _wrap(np.abs(wide_a), dtype),
        "sign": np.sign(a).astype(dtype),
    }
    nodes = [helper.make_node(op, ["a", "b"], [op.lower()]) for op in ("Add", "Sub", "Mul", "Div")]
    nodes += [helper.make_node("Mod", ["a", "b"], ["mod"], fmod=0), helper.make_node("Mod", ["a", "b"], ["fmod"], fmod=1)]
    nodes += [helper.make_node(op, ["a"], [op.lower()]) for op in ("Neg", "Abs", "Sign")]
    if info.min == 0:  # ONNX types Neg for signed numbers only
        nodes, outputs = nodes[:-3] + nodes[-2:], {name: value for name, value in outputs.items() if name != "neg"}
    path = _model(tmp_path / "model.onnx", nodes, {"a": a, "b": b}, outputs)
    code = _check(generic_c_host, runtime_cache, path, {"a": a, "b": b}, outputs)
    assert "uint64_t" in code if np.dtype(dtype).itemsize == 8 else "uint32_t" in code


def test_float_mod_follows_the_divisor_sign(generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path) -> None:
    a32 = np.array([0, -0.0, -3, 3, -1, 1, np.inf, 1, 5.5, -5.5, 5.5], dtype=np.float32)
    b32 = np.array([-2, 2, np.inf, np.inf, -np.inf, -np.inf, 2, 0, -2, 2, 2], dtype=np.float32)
    a64, b64 = a32.astype(np.float64), b32.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        outputs = {"mod32": np.mod(a32, b32), "fmod32": np.fmod(a32, b32), "mod64": np.mod(a64, b64)}
    nodes = [helper.make_node("Mod", ["a32", "b32"], ["mod32"], fmod=0),
             helper.make_node("Mod", ["a32", "b32"], ["fmod32"], fmod=1),
             helper.make_node("Mod", ["a64", "b64"], ["mod64"], fmod=0)]
    inputs = {"a32": a32, "b32": b32, "a64": a64, "b64": b64}
    path = _model(tmp_path / "model.onnx", nodes, inputs, outputs)
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, inputs,
                                           list(outputs.values()), atol=0, rtol=0, cache_dir=runtime_cache,
                                           toolchain=STRICT)
    for actual, expected in zip(result.outputs, outputs.values()):
        actual = np.asarray(actual).reshape(expected.shape)
        np.testing.assert_array_equal(np.signbit(actual), np.signbit(expected))  # -0 and +0 apart
        np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint64])
def test_bitshift_guards_counts_out_of_range(dtype: type, generic_c_host: PluginHost, runtime_cache: Path,
                                             tmp_path: Path) -> None:
    bits = np.dtype(dtype).itemsize * 8
    signed = np.dtype(dtype).kind == "i"
    x = np.array([-8 if signed else 8, 4, -1 if signed else 1, 1 << (bits - 2), 3, 5], dtype=dtype)
    count = np.array([1, bits - 1, bits, 1, -1 if signed else bits + 3, 0], dtype=dtype)
    left = [0 if not 0 <= int(n) < bits else int(v) << int(n) for v, n in zip(x, count)]
    right = [(-1 if int(v) < 0 else 0) if not 0 <= int(n) < bits else int(v) >> int(n) for v, n in zip(x, count)]
    outputs = {"left": _wrap(np.array(left, dtype=object), dtype), "right": _wrap(np.array(right, dtype=object), dtype)}
    nodes = [helper.make_node("BitShift", ["x", "n"], ["left"], direction="LEFT"),
             helper.make_node("BitShift", ["x", "n"], ["right"], direction="RIGHT")]
    # Up to opset 24 ONNX types BitShift for unsigned integers only (the front end refuses signed ones); the
    # signed kernels (opset 28's node tests) wait for the front end to read opset 28.
    path = _model(tmp_path / "model.onnx", nodes, {"x": x, "n": count}, outputs)
    _check(generic_c_host, runtime_cache, path, {"x": x, "n": count}, outputs)


def test_pow_of_mixed_types(generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path) -> None:
    base = np.array([2, -2, 1, -1, 3, 7, 0, 2], dtype=np.int32)
    exponent = np.array([31, 3, -5, -3, -1, 0, 0, 40], dtype=np.int32)
    power = np.array([2.5, 0.5, 40.0, 1.0, -1.0, 2.0, 0.5, 3.0], dtype=np.float32)
    integer_power = [int(b) ** int(e) if e >= 0 else (1 if b == 1 else (-1) ** int(-e) if b == -1 else 0)
                     for b, e in zip(base, exponent)]
    float_power = np.power(np.abs(base).astype(np.float64), power.astype(np.float64))
    saturated = np.where(float_power >= 2.0**31, 2**31 - 1, np.trunc(float_power)).astype(np.int32)
    x = np.array([1.5, -2.0, 0.5, 10.0, 3.0, -1.0, 2.0, 4.0], dtype=np.float32)
    small = exponent.astype(np.int64) % 7
    outputs = {"ii": _wrap(np.array(integer_power, dtype=object), np.int32), "if": saturated,
               "fi": np.power(x.astype(np.float64), small).astype(np.float32)}
    nodes = [helper.make_node("Pow", ["base", "exponent"], ["ii"]),
             helper.make_node("Abs", ["base"], ["magnitude"]),
             helper.make_node("Pow", ["magnitude", "power"], ["if"]),
             helper.make_node("Pow", ["x", "small"], ["fi"])]
    inputs = {"base": base, "exponent": exponent, "power": power, "x": x, "small": small}
    path = _model(tmp_path / "model.onnx", nodes, inputs, outputs)
    _check(generic_c_host, runtime_cache, path, inputs, outputs, atol=0, rtol=1e-6)


def test_where_and_variadic_ops_broadcast_every_operand(generic_c_host: PluginHost, runtime_cache: Path,
                                                        tmp_path: Path) -> None:
    rng = np.random.default_rng(31)
    condition = rng.random((2, 1, 4)) > 0.5
    x = rng.integers(-2**62, 2**62, (3, 1), dtype=np.int64)
    y = rng.integers(-2**62, 2**62, (4,), dtype=np.int64)
    f = rng.standard_normal((2, 3, 1)).astype(np.float64)
    g = rng.standard_normal((3, 4)).astype(np.float64)
    h = rng.standard_normal((4,)).astype(np.float64)
    outputs = {
        "where": np.where(condition, x, y),
        "max": np.maximum(np.maximum(x, y), x), "min": np.minimum(x, y), "sum": g + h + h,
        "mean": (f + g + h) / 3, "one": h, "less": np.less(f, g), "not": np.logical_not(condition),
    }
    nodes = [helper.make_node("Where", ["c", "x", "y"], ["where"]), helper.make_node("Max", ["x", "y", "x"], ["max"]),
             helper.make_node("Min", ["x", "y"], ["min"]), helper.make_node("Sum", ["g", "h", "h"], ["sum"]),
             helper.make_node("Mean", ["f", "g", "h"], ["mean"]), helper.make_node("Sum", ["h"], ["one"]),
             helper.make_node("Less", ["f", "g"], ["less"]), helper.make_node("Not", ["c"], ["not"])]
    inputs = {"c": condition, "x": x, "y": y, "f": f, "g": g, "h": h}
    path = _model(tmp_path / "model.onnx", nodes, inputs, outputs)
    _check(generic_c_host, runtime_cache, path, inputs, outputs, atol=1e-12, rtol=1e-12)


def test_float64_activations_read_their_attributes(generic_c_host: PluginHost, runtime_cache: Path,
                                                   tmp_path: Path) -> None:
    x = np.array([-800.0, -3.0, -0.75, -0.1, 0.0, 0.3, 0.9, 2.5, 800.0])
    x32 = x.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        outputs = {
            "leaky": np.where(x >= 0, x, 0.2 * x), "elu": np.where(x >= 0, x, 0.5 * np.expm1(x)),
            "hsig": np.clip(0.3 * x + 0.4, 0, 1), "celu": np.where(x32 >= 0, x32, 2.0 * np.expm1(x32 / 2.0)),
            "softplus": np.logaddexp(0, x), "selu": 1.5 * np.where(x > 0, x, 2.0 * np.expm1(x)),
            "isinf": np.isneginf(x * np.inf),
        }
    nodes = [helper.make_node("LeakyRelu", ["x"], ["leaky"], alpha=0.2), helper.make_node("Elu", ["x"], ["elu"], alpha=0.5),
             helper.make_node("HardSigmoid", ["x"], ["hsig"], alpha=0.3, beta=0.4),
             helper.make_node("Celu", ["x32"], ["celu"], alpha=2.0),
             helper.make_node("Softplus", ["x"], ["softplus"]), helper.make_node("Selu", ["x"], ["selu"], alpha=2.0, gamma=1.5),
             helper.make_node("Mul", ["x", "inf"], ["scaled"]),
             helper.make_node("IsInf", ["scaled"], ["isinf"], detect_positive=0)]
    inputs = {"x": x, "x32": x32, "inf": np.full((9,), np.inf)}
    path = _model(tmp_path / "model.onnx", nodes, inputs, outputs)
    _check(generic_c_host, runtime_cache, path, inputs, outputs, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize(("node", "message"), [
    (helper.make_node("Mod", ["a", "b"], ["y"], fmod=2), "fmod=2 (must be 0 or 1)"),
    (helper.make_node("BitShift", ["a", "b"], ["y"], direction="UP"), "direction='UP' (must be LEFT or RIGHT)"),
])
def test_bad_attributes_are_refused_with_their_reason(node: onnx.NodeProto, message: str, generic_c_host: PluginHost,
                                                      tmp_path: Path) -> None:
    a = np.zeros((3,), dtype=np.uint32)
    path = _model(tmp_path / "model.onnx", [node], {"a": a, "b": a}, {"y": a})
    with pytest.raises(Exception, match=message.replace("(", r"\(").replace(")", r"\)")):
        compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
