"""Deeploy's row-wise dialect ops (ITAMax, ITAPartialMax, iLayerNorm, iRMSNorm) on generic-c and pulp-cluster.

Each op is exported the way QuantLib writes it (default domain, float-declared tensors holding integers, the
integer input named through ``input_types``), compiled, built with -Werror, run, and compared bit-exactly with
the numpy reference in ``tests/dialect_reference/rowwise.py`` on every configuration of the single-op tests
(``tests/support/dialect_configurations.py``): untiled, tiled with single and double buffering, and on the 8-core
cluster.  The data hits the corners of each op: ITAPartialMax rows whose maximum rises in later groups, negative
numerators for the truncating divisions, weights and biases that make iLayerNorm wrap and iRMSNorm saturate, and
tensors larger than L1 so that the tiler must cut them, always between whole rows.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import tests.dialect_reference.rowwise as rowwise
from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import INT8
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_generic_c.parsing.row_parameters import exact_isqrt
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.rowwise import (
    c_div,
    i_layer_norm,
    i_layer_norm_before_cast,
    i_rms_norm,
    i_rms_norm_before_clamp,
    i_softmax,
    ita_max,
    ita_partial_max,
    wrap8,
)
from tests.support.dialect_configurations import CONFIGURATIONS


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


# -- networks and data ---------------------------------------------------------------------------------------------

def _scalar(name: str, value: float) -> onnx.TensorProto:
    """A 1-element float tensor attribute, as QuantLib writes ``n_levels`` and ``D``."""
    return helper.make_tensor(name, TensorProto.FLOAT, [1], [value])


def _save(path: Path, node: onnx.NodeProto, shape: tuple[int, ...], constants: list[onnx.TensorProto]) -> Path:
    graph = helper.make_graph([node], node.op_type, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))], constants)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def _spread_rows(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """int8 rows over the whole range, plus a narrow row, a constant -128 row and a -128..127 ramp."""
    x = rng.integers(-128, 128, shape).astype(np.int8)
    x[0, 0, :] = rng.integers(-20, 20, shape[-1])
    x[0, 1, :] = -128
    x[0, 2, :] = np.linspace(-128, 127, shape[-1]).round().astype(np.int8)
    return x


# iSoftmax (§4.1), already mapped before the rest of the dialect, with the coefficients of Deeploy's kernel test.
I_SOFTMAX = {"coeffA": 1, "coeffB": 345, "coeffC": 62395, "log2": 255}


def i_softmax_network(path: Path) -> Path:
    attributes = {name: _scalar(name, float(value)) for name, value in I_SOFTMAX.items()}
    node = helper.make_node("iSoftmax", ["x"], ["y"], name="rowwise", n_levels=_scalar("n", 256.0), **attributes)
    return _save(path, node, ITA_SHAPE, [])


def i_softmax_reference(x: np.ndarray) -> np.ndarray:
    return i_softmax(x, I_SOFTMAX["coeffA"], I_SOFTMAX["coeffB"], I_SOFTMAX["coeffC"], I_SOFTMAX["log2"]).astype(np.uint8)


# ITAMax / ITAPartialMax: 16 rows of 32 int8 in, 32 uint8 out (512 + 512 bytes against a 512-byte L1): tiles of
# 6 rows single-buffered, of 2 rows double-buffered, each shared among the cluster's cores.  LONG_ROWS: rows so
# long that a double-buffered tile holds exactly one.
ITA_SHAPE = (1, 16, 32)
LONG_ROWS = (1, 6, 80)
GROUP_WIDTH = 8


def ita_max_network(path: Path, shape: tuple[int, ...] = ITA_SHAPE) -> Path:
    return _save(path, helper.make_node("ITAMax", ["x"], ["y"], name="rowwise", n_levels=_scalar("n", 256.0)), shape, [])


def ita_max_inputs(shape: tuple[int, ...] = ITA_SHAPE) -> np.ndarray:
    return _spread_rows(np.random.default_rng(19), shape)


def ita_partial_max_network(path: Path, shape: tuple[int, ...] = ITA_SHAPE) -> Path:
    node = helper.make_node("ITAPartialMax", ["x"], ["y"], name="rowwise", group_width=GROUP_WIDTH,
                            n_levels=_scalar("n", 256.0))
    return _save(path, node, shape, [])


def ita_partial_max_inputs(shape: tuple[int, ...] = ITA_SHAPE) -> np.ndarray:
    """Rows whose maximum climbs group after group, one late jump, and one row peaking in its first group."""
    rng = np.random.default_rng(23)
    x = _spread_rows(rng, shape)
    groups = shape[-1] // GROUP_WIDTH
    step = 220 // groups
    x[0, 3, :] = -90
    x[0, 3, -GROUP_WIDTH:] = 120  # one late jump of 210: the sum so far shifts right by (210 + 16) >> 5 = 7
    x[0, 4, :GROUP_WIDTH] = 127  # the maximum in the first group: nothing is ever rescaled
    x[0, 4, GROUP_WIDTH:] = rng.integers(-128, 100, shape[-1] - GROUP_WIDTH)
    for row in range(5, min(shape[1], 11)):  # group g holds values below -100 + step·g: every group raises the maximum
        x[0, row] = np.concatenate([rng.integers(-128, -100 + step * g, GROUP_WIDTH) for g in range(groups)])
    return x


# iLayerNorm / iRMSNorm: 24 rows of 48 int8 (1152 bytes in, as many out); weight and bias int16 [48] stay whole in
# every tile.  Resident parameters and the tile tables do not leave room for a double-buffered row in 512 bytes,
# so these tile into 1024 bytes, still far less than the tensors.
NORM_SHAPE = (1, 24, 48)
NORM_D = 256
NORM_L1 = 1024


def norm_parameters() -> tuple[np.ndarray, np.ndarray]:
    """Large int16 weights of both signs (products of both signs) and biases."""
    rng = np.random.default_rng(29)
    weight = rng.integers(-32000, 32000, NORM_SHAPE[-1]).astype(np.int64)
    bias = rng.integers(-20000, 20000, NORM_SHAPE[-1]).astype(np.int64)
    return weight, bias


RMS_WEIGHT_DIVISOR, RMS_D = 64, 4  # small weights and shift: the truncating quotient shows in the output


def norm_inputs() -> np.ndarray:
    """Mostly negative rows (negative means and quotients), tiny-variance rows (large quotients), a constant row."""
    rng = np.random.default_rng(31)
    x = _spread_rows(rng, NORM_SHAPE)
    x[0, 3, :] = rng.integers(-128, -100, NORM_SHAPE[-1])
    x[0, 4, :] = -7
    x[0, 5, :] = rng.integers(-2, 3, NORM_SHAPE[-1])
    x[0, 6, :] = rng.integers(100, 128, NORM_SHAPE[-1])
    x[0, 7:10, :] = rng.integers(-1, 1, (3, NORM_SHAPE[-1]))  # negative means in (-1, 0): c_div gives 0, floor -1
    return x


def i_layer_norm_network(path: Path) -> Path:
    weight, bias = norm_parameters()
    node = helper.make_node("iLayerNorm", ["x", "weight", "bias"], ["y"], name="rowwise", D=_scalar("D", NORM_D),
                            n_levels=_scalar("n", 256.0))
    constants = [numpy_helper.from_array(weight.astype(np.float32), "weight"),
                 numpy_helper.from_array(bias.astype(np.float32), "bias")]
    return _save(path, node, NORM_SHAPE, constants)


def i_layer_norm_reference(x: np.ndarray) -> np.ndarray:
    weight, bias = norm_parameters()
    return i_layer_norm(x, weight, bias, NORM_D)


def i_rms_norm_network(path: Path) -> Path:
    weight = norm_parameters()[0] // RMS_WEIGHT_DIVISOR
    node = helper.make_node("iRMSNorm", ["x", "weight"], ["y"], name="rowwise", D=_scalar("D", RMS_D),
                            n_levels=_scalar("n", 256.0))
    return _save(path, node, NORM_SHAPE, [numpy_helper.from_array(weight.astype(np.float32), "weight")])


def i_rms_norm_reference(x: np.ndarray) -> np.ndarray:
    return i_rms_norm(x, norm_parameters()[0] // RMS_WEIGHT_DIVISOR, RMS_D)


@dataclass(frozen=True)
class Case:
    """One op's network, input, numpy reference, and the L1 size its tiled configurations use."""

    kernel: str
    shape: tuple[int, ...]
    build: Callable[[Path], Path]
    inputs: Callable[[], np.ndarray]
    reference: Callable[[np.ndarray], np.ndarray]
    tiled_l1: int = 512


CASES: dict[str, Case] = {
    "ITAMax": Case("ITAMax integer", ITA_SHAPE, ita_max_network, ita_max_inputs, ita_max),
    "ITAPartialMax": Case("ITAPartialMax integer", ITA_SHAPE, ita_partial_max_network, ita_partial_max_inputs,
                          lambda x: ita_partial_max(x, GROUP_WIDTH)),
    "iLayerNorm": Case("iLayerNorm integer", NORM_SHAPE, i_layer_norm_network, norm_inputs, i_layer_norm_reference,
                       NORM_L1),
    "iRMSNorm": Case("iRMSNorm integer", NORM_SHAPE, i_rms_norm_network, norm_inputs, i_rms_norm_reference, NORM_L1),
    "iSoftmax": Case("iSoftmax integer", ITA_SHAPE, i_softmax_network, ita_max_inputs, i_softmax_reference),
}


# -- the references and the data -----------------------------------------------------------------------------------

def test_the_reference_helpers_follow_c() -> None:
    assert c_div(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2])).tolist() == [3, -3, -3, 3]
    assert wrap8(np.array([127, 128, 255, 256, -129, -385])).tolist() == [127, -128, -1, 0, 127, 127]


def test_ita_max_reference_by_hand() -> None:
    # Row [0, -16, -48, -200]: exponents (d + 16) >> 5 = 0, 1, 2, 6; weights 256, 128, 64, 4; S = 452;
    # inv = 255·256 // 452 = 144; y = 144 >> e = 144, 72, 36, 2.
    assert ita_max(np.array([[0, -16, -48, -200]])).tolist() == [[144, 72, 36, 2]]


def test_ita_partial_max_reference_rescales_when_the_maximum_rises() -> None:
    # Groups [0, 0] then [64, 64]: after group 1, P = 512 (peak 0); group 2 raises the peak by 64, so
    # P = (512 >> ((64 + 16) >> 5 = 2)) + 512 = 640; inv = 127·256 // 640 = 50; y = 50 >> 2 = 12 and 50.
    assert ita_partial_max(np.array([[0, 0, 64, 64]]), 2).tolist() == [[12, 12, 50, 50]]
    # One group of four: S = 2·(256 >> 2) + 2·256 = 640 as well.
    assert ita_partial_max(np.array([[0, 0, 64, 64]]), 4).tolist() == [[12, 12, 50, 50]]


def test_the_partial_max_data_raises_the_maximum_in_later_groups() -> None:
    x = ita_partial_max_inputs().astype(np.int64)[0]
    running = np.maximum.accumulate(np.maximum(x.reshape(ITA_SHAPE[1], -1, GROUP_WIDTH).max(axis=-1), -128), axis=-1)
    rescaling_steps = ((np.diff(running, axis=-1) + 16) >> 5) > 0
    assert (rescaling_steps.sum(axis=-1) >= 3).sum() >= 3  # rows rescaling their running sum in every later group
    assert rescaling_steps[3].tolist() == [False, False, True]  # the late jump
    assert not rescaling_steps[4].any()  # the maximum in the first group


def test_the_norm_data_needs_truncating_division(monkeypatch: pytest.MonkeyPatch) -> None:
    x = norm_inputs()
    truncating = (i_layer_norm_reference(x), i_rms_norm_reference(x))
    monkeypatch.setattr(rowwise, "c_div", lambda a, b: np.floor_divide(np.asarray(a, np.int64), np.asarray(b, np.int64)))
    flooring = (i_layer_norm_reference(x), i_rms_norm_reference(x))
    for exact, floored in zip(truncating, flooring):
        assert (exact != floored).sum() >= 10


def test_i_layer_norm_wraps_where_saturation_would_differ() -> None:
    weight, bias = norm_parameters()
    before = i_layer_norm_before_cast(norm_inputs(), weight, bias, NORM_D)
    outside = (before < -128) | (before > 127)
    assert outside.sum() >= 20
    wrapped = i_layer_norm_reference(norm_inputs())
    assert (wrapped[outside] != np.clip(before[outside], -128, 127)).all()


def test_i_rms_norm_saturates_both_ways() -> None:
    before = i_rms_norm_before_clamp(norm_inputs(), norm_parameters()[0] // RMS_WEIGHT_DIVISOR, RMS_D)
    assert (before > 127).sum() >= 10 and (before < -128).sum() >= 10
    assert ((before > -128) & (before < 127)).sum() >= NORM_SHAPE[1] * NORM_SHAPE[2] // 4


# -- the exact integer square root ---------------------------------------------------------------------------------

def test_the_kernels_integer_square_root_is_exact(tmp_path: Path) -> None:
    """The C root of every value around the perfect squares from 0 to 2^62 and of random 64-bit values is floor(sqrt)."""
    roots = sorted({*range(0, 300), *(1 << k for k in range(32)), *((1 << k) - 1 for k in range(1, 32)),
                    3037000499, 2147483647, 2147483648, 94906265, 4294967295})
    values = sorted({v for r in roots for v in (r * r - 1, r * r, r * r + 1, (r + 1) * (r + 1) - 1) if 0 <= v < 1 << 64})
    values += [int(v) for v in np.random.default_rng(37).integers(0, 1 << 63, 2000, dtype=np.uint64)]
    values.append((1 << 64) - 1)
    source = tmp_path / "isqrt.c"
    source.write_text("#include <stdint.h>\n#include <stdio.h>\n#include <inttypes.h>\n"
                      "int main(void) {\n    uint64_t value, root;\n"
                      "    while (scanf(\"%\" SCNu64, &value) == 1) {\n"
                      f"        {exact_isqrt('value', 'root')}\n"
                      "        printf(\"%\" PRIu64 \"\\n\", root);\n    }\n    return 0;\n}\n")
    executable = tmp_path / "isqrt"
    subprocess.run(["gcc", "-std=c99", "-O2", *strict_flags(), str(source), "-o", str(executable)], check=True)
    run = subprocess.run([str(executable)], input="\n".join(map(str, values)) + "\n", capture_output=True, text=True,
                         check=True)
    assert [int(line) for line in run.stdout.split()] == [math.isqrt(v) for v in values]
    # These are the values a plain double sqrt gets wrong, so the check above is not vacuous.
    assert any(int(math.sqrt(v)) != math.isqrt(v) for v in values)


# -- bit-exact on every configuration ------------------------------------------------------------------------------

@pytest.mark.parametrize("op", list(CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_rowwise_op_is_bit_exact(configuration: str, op: str, host: PluginHost, tmp_path: Path) -> None:
    case = CASES[op]
    model = case.build(tmp_path / f"{op}.onnx")
    x = case.inputs()
    expected = case.reference(x)
    base = CONFIGURATIONS[configuration]
    levels = {level: case.tiled_l1 for level in base.level_sizes}
    options = CompileOptions(platform=base.platform, level_sizes=levels, buffering=base.buffering, cores=base.cores,
                             input_types={"x": INT8})
    generated, result = validate_with_data(model, options, host, {"x": x}, [expected], atol=0.0, rtol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == "rowwise")
    assert layer["kernel"] == case.kernel
    tiled = "tiling" in layer["code_transformations"]
    # Input and output together exceed L1: the tiled configurations cut them, and only between whole rows.
    assert tiled == ("L1" in configuration)
    if tiled:
        entry = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == "rowwise")
        assert entry["tiles"] > 1
        assert entry["buffers"]["in0"]["slot_bytes"] % case.shape[-1] == 0
        if "cores" in configuration:  # tiles of several rows are shared among the cores, a run of rows each
            assert max(entry["cluster"]["busy_cores"]) > 1
            assert sum(work > 0 for work in entry["cluster"]["work"]) > 1


LONG_ROW_CASES: dict[str, tuple[Callable[[Path, tuple[int, ...]], Path], Callable[[tuple[int, ...]], np.ndarray],
                                 Callable[[np.ndarray], np.ndarray]]] = {
    "ITAMax": (ita_max_network, ita_max_inputs, ita_max),
    "ITAPartialMax": (ita_partial_max_network, ita_partial_max_inputs, lambda x: ita_partial_max(x, GROUP_WIDTH)),
}


@pytest.mark.parametrize("op", list(LONG_ROW_CASES))
@pytest.mark.parametrize("configuration", [name for name in CONFIGURATIONS if "double" in name])
def test_a_tile_holding_one_long_row_keeps_it_whole(configuration: str, op: str, host: PluginHost, tmp_path: Path) -> None:
    """Rows of 80 (10 groups): double-buffered in 512 bytes a tile holds one row, never a part of one."""
    build, inputs, reference = LONG_ROW_CASES[op]
    model = build(tmp_path / f"{op}.onnx", LONG_ROWS)
    x = inputs(LONG_ROWS)
    base = CONFIGURATIONS[configuration]
    options = CompileOptions(platform=base.platform, level_sizes=dict(base.level_sizes), buffering=base.buffering,
                             cores=base.cores, input_types={"x": INT8})
    generated, result = validate_with_data(model, options, host, {"x": x}, [reference(x)], atol=0.0, rtol=0.0,
                                           repeats=1, toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    entry = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == "rowwise")
    assert entry["tiles"] == LONG_ROWS[1]
    assert entry["buffers"]["in0"]["slot_bytes"] == LONG_ROWS[-1]


@pytest.mark.parametrize("op", list(CASES))
@pytest.mark.parametrize("configuration", ["generic-c L1 512 single", "pulp-cluster 8 cores L1 512 double"])
def test_an_axis_attribute_naming_another_axis_still_reduces_the_last(configuration: str, op: str, host: PluginHost,
                                                                       tmp_path: Path) -> None:
    """QuantLib copies the replaced Softmax's ``axis``; Deeploy's kernels ignore it, so tiles must keep rows whole."""
    case = CASES[op]
    model = onnx.load(case.build(tmp_path / "plain.onnx"))
    model.graph.node[0].attribute.append(helper.make_attribute("axis", 1))
    path = tmp_path / "axis.onnx"
    onnx.save(model, path)
    x = case.inputs()
    base = CONFIGURATIONS[configuration]
    options = CompileOptions(platform=base.platform, level_sizes={"L1": case.tiled_l1}, buffering=base.buffering,
                             cores=base.cores, input_types={"x": INT8})
    generated, result = validate_with_data(path, options, host, {"x": x}, [case.reference(x)], atol=0.0, rtol=0.0,
                                           repeats=1, toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    entry = next(entry for entry in generated.report["tiling"]["layers"] if entry["layer"] == "rowwise")
    assert entry["tiles"] > 1 and set(entry["tile"]) == {"1"}  # cut along the rows (axis 1), never along axis 2


# -- bad input -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("op", "attribute"), [("ITAMax", "n_levels"), ("ITAPartialMax", "group_width"),
                                               ("iLayerNorm", "D"), ("iRMSNorm", "D")])
def test_a_missing_attribute_is_one_line_naming_node_op_and_attribute(op: str, attribute: str, tmp_path: Path) -> None:
    model = onnx.load(CASES[op].build(tmp_path / "complete.onnx"))
    node = model.graph.node[0]
    kept = [a for a in node.attribute if a.name != attribute]
    del node.attribute[:]
    node.attribute.extend(kept)
    path = tmp_path / "missing.onnx"
    onnx.save(model, path)
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(path), "--platform", "generic-c",
                             "--input-type", "x=int8", "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith(f"error: node 'rowwise' ({op}):")
    assert f"attribute {attribute!r} is required; add it to the node" in lines[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("input_type", "expected"), [
    ("int16", "error: node 'rowwise' (ITAMax): dtype — input 0 is int16, ITAMax takes int8 or uint8"),
    (None, "error: input 'x' is float32 but feeds node 'rowwise' (ITAMax), an integer kernel; name its type with "
           "--input-type x=int8"),
])
def test_an_input_that_is_not_8_bit_integers_is_refused_in_one_line(input_type: str | None, expected: str,
                                                                     tmp_path: Path) -> None:
    model = ita_max_network(tmp_path / "ita_max.onnx")
    typed = ["--input-type", f"x={input_type}"] if input_type else []
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(model), "--platform", "generic-c",
                             *typed, "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), result.stderr
    assert not (tmp_path / "out").exists()
