"""Deeploy's element-wise dialect ops (issue 19, item 2) on generic-c and pulp-cluster, bit-exact with numpy.

iGELU, iHardswish, their requantised forms as Deeploy fuses them, iNoNorm, RequantizedAdd and RQIntegerDiv,
each in a network exported the way QuantLib writes it (default domain, float-declared tensors and initializers
holding integers, integer inputs named through ``input_types``), compiled with -Werror and run untiled, tiled
into a 512-byte L1 (single and double buffering) and on the 8-core cluster.  The expected values come from
``tests/dialect_reference/elementwise.py``, written from ``deeploy-op-semantics.md``; each case's inputs are
chosen so the corners the document names occur (checked by the reference tests below, so no corner is vacuous).

The last part checks the platform's own fusion of iGELU / iHardswish / IntegerDiv with the RequantShift after
them: the pair becomes one layer, its int32 intermediate disappears from the generated code, and the output is
the unfused pair's (compiled with the intermediate kept as a graph output, which prevents the fusion).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.ir.dtypes import INT8, INT32, UINT8, DataType
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from deeploy_generic_c import plugin as generic_c_plugin
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin
from tests.dialect_reference.elementwise import (
    RequantSpec,
    igelu,
    ihardswish,
    inonorm,
    integer_div,
    requant_shift,
    requantized_add,
    requantized_igelu,
    requantized_ihardswish,
    rq_integer_div,
)
from tests.support.dialect_configurations import CONFIGURATIONS

SHAPE = (1, 8, 32)
"""Activations of every case: 256 elements (each int8 value once), more than a 512-byte L1 holds with their
outputs, so tiling happens; larger tensors need more tiles, whose table (it lives in L1 too) would not fit."""


@pytest.fixture(scope="module")
def host() -> PluginHost:
    """Both bundled platforms and nothing else that happens to be installed."""
    plugins = PluginHost()
    plugins.add_plugin(generic_c_plugin, name="generic-c", distribution="deeploy-generic-c")
    plugins.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return plugins


@dataclass
class Case:
    """One test network: its nodes, float-declared inputs (with their integer types), constants, and the reference."""

    nodes: list[onnx.NodeProto]
    inputs: dict[str, np.ndarray]
    input_types: dict[str, DataType]
    expected: np.ndarray
    constants: dict[str, np.ndarray] = field(default_factory=dict)
    layer: str = ""
    kernel: str = ""
    extra_outputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    l1: int | None = None
    """An L1 size replacing the configuration's 512 bytes where the case needs more (and still tiles)."""

    def save(self, path: Path) -> Path:
        """The model as QuantLib writes it: every tensor FLOAT, integers stored in it."""
        graph = helper.make_graph(
            self.nodes, path.stem,
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(value.shape)) for name, value in self.inputs.items()],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(self.expected.shape)),
             *(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)) for name, shape in self.extra_outputs.items())],
            [numpy_helper.from_array(np.asarray(value, np.float32), name) for name, value in self.constants.items()],
        )
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        return path


def _options(configuration: str, input_types: dict[str, DataType], l1: int | None = None) -> CompileOptions:
    base = CONFIGURATIONS[configuration]
    sizes = {level: (l1 if level == "L1" and l1 is not None else size) for level, size in base.level_sizes.items()}
    return CompileOptions(platform=base.platform, level_sizes=sizes, buffering=base.buffering, cores=base.cores,
                          input_types=dict(input_types))


def _int8_ramp(rng: np.random.Generator, shape: tuple[int, ...] = SHAPE) -> np.ndarray:
    """Every int8 value once (negative inputs, zero, both ends) in a random order."""
    values = rng.permutation(np.arange(-128, 128))
    return values.reshape(shape).astype(np.int8)


def _moved_first(x: np.ndarray, value: int) -> np.ndarray:
    """``x`` with ``value`` swapped into its first element (the element a tie is set up for)."""
    flat = x.reshape(-1)
    where = int(np.flatnonzero(flat == value)[0])
    flat[0], flat[where] = flat[where], flat[0]
    return x


def _tie_add(values: np.ndarray, mul: int, shift: int) -> int:
    """An ``add`` that puts ``values[0]·mul + add`` exactly halfway between two multiples of 2^shift (a rounding tie)."""
    half = 1 << (shift - 1)
    return int(half - (int(values.reshape(-1)[0]) * mul) % (1 << shift))


def _assert_shared_among_cores(report: dict[str, Any], configuration: str) -> None:
    """On the cluster the layer's element-wise work is split among several cores, as for every inline kernel."""
    if "pulp-cluster" in configuration:
        work = report["estimate"]["layers"][0]["work"]
        assert sum(1 for share in work if share) > 1 and sum(work) == report["layers"][0]["ops"], work


# -- the cases (parameters chosen from the document's typical values) ----------------------------------------------

B, ONE = -40, 1743
"""iGELU's attributes in I-BERT's 8-bit export: |x| beyond 40 saturates the polynomial."""
ONE_OVER_SIX, THREE, SIX = 1365, 48, 96
"""iHardswish at an input scale of 1/16: three = 3/scale, six = 6/scale, one_over_six = 2^13/6."""
DELTA, EPS, ETA = 65536, 1, 7


def igelu_case() -> Case:
    x = _int8_ramp(np.random.default_rng(19))
    node = helper.make_node("iGELU", ["x"], ["y"], name="gelu", b=B, one=ONE)
    return Case([node], {"x": x}, {"x": INT8}, igelu(x, B, ONE).astype(np.int32), layer="gelu", kernel="iGELU integer")


def requantized_igelu_case() -> Case:
    x = _moved_first(_int8_ramp(np.random.default_rng(20)), -17)
    mul, shift = 3, 11
    add = _tie_add(igelu(np.array([-17]), B, ONE), mul, shift)  # a negative tie: half up rounds it toward +inf
    node = helper.make_node("RequantizediGELU", ["x", "mul", "add", "shift"], ["y"], name="rqgelu", b=B, one=ONE)
    constants = {"mul": np.array([mul]), "add": np.array([add]), "shift": np.array([shift])}
    expected = requantized_igelu(x, mul, add, shift, B, ONE).astype(np.int8)
    return Case([node], {"x": x}, {"x": INT8}, expected, constants, "rqgelu", "RequantizediGELU integer (first mul/add, int8 clamp)")


def ihardswish_case() -> Case:
    x = _int8_ramp(np.random.default_rng(21))
    node = helper.make_node("iHardswish", ["x"], ["y"], name="hswish", one_over_six=ONE_OVER_SIX, three=THREE, six=SIX)
    return Case([node], {"x": x}, {"x": INT8}, ihardswish(x, ONE_OVER_SIX, THREE, SIX).astype(np.int32), layer="hswish",
                kernel="iHardswish integer")


def requantized_ihardswish_case() -> Case:
    x = _moved_first(_int8_ramp(np.random.default_rng(22)), 21)
    mul, shift = 3, 17
    add = _tie_add(ihardswish(np.array([21]), ONE_OVER_SIX, THREE, SIX), mul, shift)
    node = helper.make_node("RequantizediHardswish", ["x"], ["y"], name="rqhswish", one_over_six=ONE_OVER_SIX, three=THREE,
                            six=SIX, mul=mul, add=add, shift=shift)
    expected = requantized_ihardswish(x, mul, add, shift, ONE_OVER_SIX, THREE, SIX).astype(np.int8)
    return Case([node], {"x": x}, {"x": INT8}, expected, layer="rqhswish",
                kernel="RequantizediHardswish integer (first mul/add, int8 clamp)")


INONORM_D, INONORM_MUL = 256, 3
INONORM_L1 = 1024
"""iNoNorm's L1 in the tiled configurations: with four operands per tile, the tiling table (it lives in L1 too)
and double buffers need 610 bytes at least; the 1280 bytes of operands still exceed 1024."""


def inonorm_case() -> Case:
    rng = np.random.default_rng(23)
    x = _int8_ramp(rng, SHAPE)
    weights = rng.integers(-128, 128, SHAPE)
    bias = rng.integers(-6000, 6000, SHAPE)
    node = helper.make_node("iNoNorm", ["x", "w", "b"], ["y"], name="nonorm", D=np.array([float(INONORM_D)]),
                            mul=np.array([float(INONORM_MUL)]), n_levels=np.array([256.0]))
    expected = inonorm(x, weights, bias, INONORM_D, INONORM_MUL).astype(np.int8)
    return Case([node], {"x": x}, {"x": INT8}, expected, {"w": weights, "b": bias}, "nonorm", "iNoNorm integer (wraps to int8)",
                l1=INONORM_L1)


ADD_SPECS: dict[str, tuple[RequantSpec, RequantSpec, RequantSpec]] = {
    # Different scales per input; a signed int8 output.
    "signed out": (RequantSpec(mul=3, add=1, div=4), RequantSpec(mul=5, add=-3, div=8, n_levels=256, signed=False),
                   RequantSpec(mul=7, add=2, div=8)),
    # An unsigned 4-bit first input range, an unsigned 8-bit output with a non-zero add.
    "unsigned out": (RequantSpec(mul=1, add=0, div=2, n_levels=16, signed=False), RequantSpec(mul=9, add=8, div=16),
                     RequantSpec(mul=3, add=10, div=2, n_levels=256, signed=False)),
}


def requantized_add_case(which: str) -> Case:
    rng = np.random.default_rng(24)
    a = _int8_ramp(rng)
    b = rng.integers(0, 256, SHAPE).astype(np.uint8)
    rqs1, rqs2, rqs_out = ADD_SPECS[which]
    attributes = {**rqs1.attributes("rqs1"), **rqs2.attributes("rqs2"), **rqs_out.attributes("rqsOut")}
    node = helper.make_node("RequantizedAdd", ["a", "b"], ["y"], name="rqadd", **attributes)
    out_type = np.int8 if rqs_out.signed else np.uint8
    expected = requantized_add(a, b, rqs1, rqs2, rqs_out).astype(out_type)
    return Case([node], {"a": a, "b": b}, {"a": INT8, "b": UINT8}, expected, layer="rqadd",
                kernel="RequantizedAdd integer (three RequantShifts)")


DIV_A_SHAPE, DIV_B_SHAPE = (1, 16, 16), (1, 16, 1)
DIV_L1 = 1024
"""The division cases' L1 in the tiled configurations: an int32 A, the per-row B and the requantisation
parameters, double buffered with the tiling table, need more than 512 bytes; A alone (1024 bytes) still does not
fit, so they tile."""


def _division_inputs(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Signed numerators, one positive divisor per row, the first row small enough that results saturate."""
    a = rng.integers(-3000, 3000, DIV_A_SHAPE).astype(np.int32)
    b = rng.integers(1000, 40000, DIV_B_SHAPE).astype(np.int32)
    b[0, 0, 0] = 3
    return a, b


def rq_integer_div_case() -> Case:
    a, b = _division_inputs(np.random.default_rng(25))
    mul, shift = 3, 12
    add = _tie_add(integer_div(a[0, 1, :1], b[0, 1, :1], DELTA, EPS, ETA), mul, shift)
    node = helper.make_node("RQIntegerDiv", ["a", "b", "rq_mul", "rq_add", "rq_div"], ["y"], name="rqdiv", Delta=DELTA,
                            eps=EPS, eta=ETA, div=np.array([4096.0]), n_levels=np.array([256.0]), signed=np.array([1.0]))
    constants = {"rq_mul": np.array([mul]), "rq_add": np.array([add]), "rq_div": np.array([shift])}
    expected = rq_integer_div(a, b, mul, add, shift, DELTA, EPS, ETA).astype(np.int8)
    return Case([node], {"a": a, "b": b}, {"a": INT32, "b": INT32}, expected, constants, "rqdiv",
                "RQIntegerDiv integer (first mul/add, int8 clamp)", l1=DIV_L1)


CASES: dict[str, Callable[[], Case]] = {
    "iGELU": igelu_case,
    "RequantizediGELU": requantized_igelu_case,
    "iHardswish": ihardswish_case,
    "RequantizediHardswish": requantized_ihardswish_case,
    "iNoNorm": inonorm_case,
    "RequantizedAdd signed out": lambda: requantized_add_case("signed out"),
    "RequantizedAdd unsigned out": lambda: requantized_add_case("unsigned out"),
    "RQIntegerDiv": rq_integer_div_case,
}


# -- the references exercise the corners they are meant to ----------------------------------------------------------

def test_igelu_reference_saturates_beyond_minus_b() -> None:
    x = np.array([-128, -41, -40, -1, 0, 1, 40, 41, 127])
    y = igelu(x, B, ONE)
    # |x| >= 40 = -b: L = sgn(x)·one, so y = 0 for negative x and y = x·one for positive x.
    assert y[[0, 1, 2]].tolist() == [0, 0, 0] and y[[6, 7, 8]].tolist() == [40 * ONE, 41 * ONE, 127 * ONE]
    # x = -1: q = 1, d = -39, L = -(1743 - 1521) = -222, (1743 - 222) >> 1 = 760 → -760; x = 1: (1743 + 222) >> 1 = 982.
    assert y[[3, 4, 5]].tolist() == [-760, 0, 982]


def test_deeploy_requantisation_rounds_ties_up_and_clamps_to_int8() -> None:
    case = requantized_igelu_case()
    t = igelu(case.inputs["x"], B, ONE) * 3 + int(case.constants["add"][0])
    assert (t.reshape(-1)[0] % 2048) == 1024 and t.reshape(-1)[0] < 0  # a negative tie, rounded toward +inf
    assert requantized_igelu(np.array([-17]), 3, int(case.constants["add"][0]), 11, B, ONE)[0] == (t.reshape(-1)[0] + 1024) >> 11
    assert case.expected.min() == -128 or (t >> 11).max() > 127  # the int8 clamp binds
    assert (t >> 11).max() > 127 and case.expected.max() == 127


def test_ihardswish_reference_clamps_both_ends() -> None:
    y = ihardswish(np.array([-128, -48, -47, 0, 47, 48, 127]), ONE_OVER_SIX, THREE, SIX)
    assert y.tolist() == [0, 0, -47 * 1 * ONE_OVER_SIX, 0, 47 * 95 * ONE_OVER_SIX, 48 * 96 * ONE_OVER_SIX,
                          127 * 96 * ONE_OVER_SIX]
    case = requantized_ihardswish_case()
    t = ihardswish(case.inputs["x"], ONE_OVER_SIX, THREE, SIX) * 3 + int(next(helper.get_attribute_value(a) for a in case.nodes[0].attribute if a.name == "add"))
    assert (t.reshape(-1)[0] % (1 << 17)) == 1 << 16 and case.expected.max() == 127


def test_inonorm_reference_wraps_instead_of_saturating() -> None:
    assert inonorm(np.array([127]), np.array([1]), np.array([1]), 1, 1).tolist() == [-128]
    case = inonorm_case()
    raw = ((case.inputs["x"].astype(np.int64) * case.constants["w"] + case.constants["b"]) * INONORM_MUL) >> 8
    wrapped = (raw > 127) | (raw < -128)
    assert wrapped.any() and np.array_equal(case.expected[wrapped], ((raw[wrapped] + 128) % 256 - 128).astype(np.int8))


def test_requantized_add_reference_requantises_each_side_then_the_sum() -> None:
    rqs1, rqs2, rqs_out = ADD_SPECS["unsigned out"]
    # a = 9: (9 + 1) >> 1 = 5; b = 7: (63 + 8 + 8) >> 4 = 4; sum 9 → (27 + 10 + 1) >> 1 = 19.
    assert requantized_add(np.array([9]), np.array([7]), rqs1, rqs2, rqs_out).tolist() == [19]
    # a = 127 saturates the 4-bit first range at 15; a very negative sum clamps the unsigned output at 0.
    assert rqs1.apply(np.array([127, -5])).tolist() == [15, 0]
    # Signed output: a = -128 → (-384 + 1 + 2) >> 2 = -96, b = 0 → 0, sum → (-672 + 2 + 4) >> 3 = -84 (floor);
    # a = 127 → 96 and b = 255 → 159 sum to 255 → (1785 + 6) >> 3 = 223, clamped to 127.
    assert requantized_add(np.array([-128, 127]), np.array([0, 255]), *ADD_SPECS["signed out"]).tolist() == [-84, 127]
    for which in ADD_SPECS:
        expected = requantized_add_case(which).expected
        assert len(np.unique(expected)) > 20  # not collapsed onto a clamp


def test_rq_integer_div_reference_has_ties_and_clamps() -> None:
    case = rq_integer_div_case()
    q = integer_div(case.inputs["a"], case.inputs["b"], DELTA, EPS, ETA)
    t = q * 3 + int(case.constants["rq_add"][0])
    assert t[0, 1, 0] % 4096 == 2048
    assert case.expected[0, 0].min() == -128 and case.expected[0, 0].max() == 127


@pytest.mark.parametrize("case_name", list(CASES))
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_dialect_op_is_bit_exact(configuration: str, case_name: str, host: PluginHost, tmp_path: Path) -> None:
    case = CASES[case_name]()
    model = case.save(tmp_path / "op.onnx")
    generated, result = validate_with_data(model, _options(configuration, case.input_types, case.l1), host, case.inputs,
                                           [case.expected], atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layer = next(layer for layer in generated.report["layers"] if layer["node"] == case.layer)
    assert layer["kernel"] == case.kernel
    # The operands exceed the L1: the tiled configurations really cut the layer.
    assert ("tiling" in layer["code_transformations"]) == ("L1" in configuration)
    _assert_shared_among_cores(generated.report, configuration)


# -- the platform's fusion of an activation / IntegerDiv with the RequantShift after it ----------------------------

INTERMEDIATE_SYMBOL = re.compile(r"\bdc_[a-z]+_t\b")
"""How the generated C names the tensor ``t`` (``dc_out_t`` as a graph output, ``dc_<kind>_t`` otherwise)."""


def _buffer_names(report: dict[str, Any]) -> set[str]:
    """Every tensor the report's memory plan places, at any level."""
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if "name" in value and ("size" in value or "offset" in value):
                found.add(str(value["name"]))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(report["memory"])
    return found


UNFUSED_L1 = 2048


def fused_pair_case(producer: str, keep_intermediate: bool = False) -> Case:
    """``producer -> RequantShift`` with per-channel (or scalar) mul/add and a non-zero add (where Deeploy's own
    add' rewrite would differ); with ``keep_intermediate`` the int32 tensor is also a graph output."""
    rng = np.random.default_rng(26)
    if producer == "IntegerDiv":
        a, b = _division_inputs(rng)
        inputs, types = {"a": a, "b": b}, {"a": INT32, "b": INT32}
        node = helper.make_node("IntegerDiv", ["a", "b"], ["t"], name="div", Delta=DELTA, eps=EPS, eta=ETA)
        value = integer_div(a, b, DELTA, EPS, ETA)
        mul, add, div, levels, signed = rng.integers(1, 6, DIV_B_SHAPE), rng.integers(-3000, 3000, DIV_B_SHAPE), 4096, 256, True
    elif producer == "iGELU":
        x = _int8_ramp(rng)
        inputs, types = {"x": x}, {"x": INT8}
        node = helper.make_node("iGELU", ["x"], ["t"], name="gelu", b=B, one=ONE)
        value = igelu(x, B, ONE)
        mul, add, div, levels, signed = rng.integers(1, 4, (1, SHAPE[1], 1)), rng.integers(-900, 900, (1, SHAPE[1], 1)), 2048, 256, True
    else:
        x = _int8_ramp(rng)
        inputs, types = {"x": x}, {"x": INT8}
        node = helper.make_node("iHardswish", ["x"], ["t"], name="hswish", one_over_six=ONE_OVER_SIX, three=THREE, six=SIX)
        value = ihardswish(x, ONE_OVER_SIX, THREE, SIX)
        mul, add, div, levels, signed = np.array(1), np.array(30000), 1 << 16, 256, False  # unsigned 8-bit output
    requant = helper.make_node("RequantShift", ["t", "mul", "add"], ["y"], name="rq", div=float(div), n_levels=levels,
                               signed=int(signed))
    expected = requant_shift(value, mul, add, div, levels, signed).astype(np.int8 if signed else np.uint8)
    case = Case([node, requant], inputs, types, expected, {"mul": np.asarray(mul), "add": np.asarray(add)},
                f"{node.name}_rq", f"{producer} + RequantShift integer", l1=DIV_L1 if producer == "IntegerDiv" else None)
    if keep_intermediate:
        case.extra_outputs = {"t": value.shape}
        case.layer, case.kernel = "rq", "RequantShift integer"
    return case


def test_the_fused_cases_have_non_zero_adds_and_clamps() -> None:
    for producer in ("iGELU", "iHardswish", "IntegerDiv"):
        case = fused_pair_case(producer)
        assert np.any(case.constants["add"] != 0)
        info = np.iinfo(case.expected.dtype)
        assert case.expected.min() == info.min or case.expected.max() == info.max
        assert len(np.unique(case.expected)) > 20


@pytest.mark.parametrize("producer", ["iGELU", "iHardswish", "IntegerDiv"])
@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_producer_and_requant_shift_fuse_bit_exactly(configuration: str, producer: str, host: PluginHost,
                                                     tmp_path: Path) -> None:
    case = fused_pair_case(producer)
    model = case.save(tmp_path / "pair.onnx")
    generated, result = validate_with_data(model, _options(configuration, case.input_types, case.l1), host, case.inputs,
                                           [case.expected], atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    layers = generated.report["layers"]
    assert [layer["node"] for layer in layers] == [case.layer]
    assert layers[0]["kernel"] == case.kernel
    assert ("tiling" in layers[0]["code_transformations"]) == ("L1" in configuration)
    _assert_shared_among_cores(generated.report, configuration)
    # The int32 intermediate "t" is no tensor of the generated network any more: no buffer, no C symbol.
    assert "t" not in _buffer_names(generated.report)
    assert not any(INTERMEDIATE_SYMBOL.search(text) for text in generated.files.values())


@pytest.mark.parametrize("producer", ["iGELU", "iHardswish", "IntegerDiv"])
@pytest.mark.parametrize("configuration", ["generic-c untiled", "pulp-cluster 8 cores L1 512 double"])
def test_the_unfused_pair_gives_the_same_output(configuration: str, producer: str, host: PluginHost,
                                                tmp_path: Path) -> None:
    fused = fused_pair_case(producer)
    case = fused_pair_case(producer, keep_intermediate=True)
    model = case.save(tmp_path / "pair.onnx")
    value = {"iGELU": igelu, "iHardswish": ihardswish}.get(producer)
    intermediate = (integer_div(case.inputs["a"], case.inputs["b"], DELTA, EPS, ETA) if value is None else
                    value(case.inputs["x"], *((B, ONE) if producer == "iGELU" else (ONE_OVER_SIX, THREE, SIX))))
    # The unfused pair keeps its int32 tensor (in and out of the RequantShift's tiles): a 2 KiB L1 holds its tiles.
    generated, result = validate_with_data(model, _options(configuration, case.input_types, UNFUSED_L1), host, case.inputs,
                                           [fused.expected, intermediate.astype(np.int32)], atol=0.0, repeats=1,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.mismatches, c.max_abs_error) for c in result.comparisons]
    # Not fused (the int32 tensor is read outside the pair): two layers, the RequantShift on its own.
    assert [layer["kernel"] for layer in generated.report["layers"]] == [
        {"iGELU": "iGELU integer", "iHardswish": "iHardswish integer", "IntegerDiv": "IntegerDiv integer"}[producer],
        "RequantShift integer"]
    assert np.array_equal(result.outputs[0], fused.expected)
    assert "t" in _buffer_names(generated.report)
    assert any(INTERMEDIATE_SYMBOL.search(text) for text in generated.files.values())


# -- listing and refusals --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("platform", ["generic-c", "pulp-cluster"])
def test_supported_ops_lists_the_elementwise_dialect_ops(platform: str) -> None:
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "supported-ops", "--platform", platform, "--json"],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": platform})
    assert result.returncode == 0, result.stderr
    listed = {row["op"] for row in json.loads(result.stdout)}
    assert {"iGELU", "RequantizediGELU", "iHardswish", "RequantizediHardswish", "iNoNorm", "RequantizedAdd",
            "RQIntegerDiv"} <= listed


@pytest.mark.parametrize("case_name, attribute", [("RequantizedAdd signed out", "rqsOut_div"), ("iGELU", "b")])
def test_a_missing_attribute_is_one_line_naming_it(case_name: str, attribute: str, tmp_path: Path) -> None:
    case = CASES[case_name]()
    node = case.nodes[0]
    del node.attribute[[item.name for item in node.attribute].index(attribute)]
    model = case.save(tmp_path / "bad.onnx")
    types = [argument for name, dtype in case.input_types.items() for argument in ("--input-type", f"{name}={dtype}")]
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(model), "--platform", "generic-c",
                             *types, "-o", str(tmp_path / "out")],
                            capture_output=True, text=True, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"needs the attribute {attribute!r}" in lines[0], lines
