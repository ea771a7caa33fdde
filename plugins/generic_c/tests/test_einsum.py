"""Einsum beyond ONNX's node tests (float64 only): integer wrapping, float32, broadcast ellipses, three operands.

One model holds the contractions exporters write and the corners of the
loop nest (diagonals, broadcast axes, implicit outputs, a sum of everything),
built under UBSan: integer products that overflow must wrap as numpy's do,
not overflow a promoted signed int.  Expected values are numpy's einsum,
which ONNX's reference calls.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.parsing.einsum_equation import EquationError, parse

SANITIZED = ("-fsanitize=undefined,signed-integer-overflow", "-fno-sanitize-recover=all")
RNG = np.random.default_rng(31)

INPUTS: dict[str, np.ndarray] = {
    "q_i8": RNG.integers(-128, 128, (1, 2, 3, 8), dtype=np.int8),
    "k_i8": RNG.integers(-128, 128, (1, 2, 4, 8), dtype=np.int8),
    "a_u16": RNG.integers(40000, 65536, (3, 2), dtype=np.uint16),
    "b_u16": RNG.integers(40000, 65536, (2, 4), dtype=np.uint16),
    "m_i64": RNG.integers(-2 ** 62, 2 ** 62, (4, 4), dtype=np.int64),
    "x_f32": RNG.standard_normal((2, 1, 3, 5)).astype(np.float32),
    "w_f32": RNG.standard_normal((1, 4, 5, 6)).astype(np.float32),
    "u_i32": RNG.integers(-2 ** 31, 2 ** 31, (5,), dtype=np.int32),
    "v_i32": RNG.integers(-2 ** 31, 2 ** 31, (3,), dtype=np.int32),
    "t_f32": RNG.standard_normal((2, 3, 4)).astype(np.float32),
}

CONTRACTIONS = [  # (equation, inputs, output)
    ("bhid,bhjd->bhij", ["q_i8", "k_i8"], "scores"),  # attention scores, wrapping in int8
    ("ij,jk->ik", ["a_u16", "b_u16"], "product"),  # uint16 products overflow int once promoted
    ("ii->i", ["m_i64"], "diagonal"),
    ("ii", ["m_i64"], "trace"),  # implicit output: the sum of the diagonal
    ("...ij,...jk", ["x_f32", "w_f32"], "broadcast"),  # ellipses broadcast (2, 1) against (1, 4)
    ("i,j->ij", ["u_i32", "v_i32"], "outer"),
    ("ijk->", ["t_f32"], "total"),
    ("ijk->kji", ["t_f32"], "reversed"),
    ("i,j,i->j", ["u_i32", "v_i32", "u_i32"], "three"),
]


def _model() -> onnx.ModelProto:
    nodes = [helper.make_node("Einsum", inputs, [output], equation=equation) for equation, inputs, output in
             CONTRACTIONS]
    graph = helper.make_graph(
        nodes, "einsums",
        [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
         for name, value in INPUTS.items()],
        [helper.make_tensor_value_info(output, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
         for output, value in _expected().items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])


def _expected() -> dict[str, np.ndarray]:
    return {output: np.einsum(equation, *(INPUTS[name] for name in inputs)) for equation, inputs, output in
            CONTRACTIONS}


def test_contractions_match_numpy_and_integers_wrap(tmp_path: Path, generic_c_host: PluginHost,
                                                    runtime_cache: Path) -> None:
    onnx.save(_model(), tmp_path / "einsums.onnx")
    _, generated = compile_model(tmp_path / "einsums.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(SANITIZED), runtime_cache)
    actual, _ = run_network(executable, generated, {spec.name: INPUTS[spec.name] for spec in generated.inputs},
                            repeats=1)
    results = {spec.name: got for spec, got in zip(generated.outputs, actual)}
    expected = _expected()
    for equation, _, output in CONTRACTIONS:
        want = expected[output]
        got = np.asarray(results[output]).reshape(want.shape)
        if want.dtype == np.float32:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=equation)
        else:
            assert np.array_equal(got, want), (equation, got, want)


def test_float16_einsum_is_refused_by_name(tmp_path: Path, generic_c_host: PluginHost) -> None:
    node = helper.make_node("Einsum", ["x"], ["y"], equation="ij->ji")
    graph = helper.make_graph([node], "refused", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [3, 2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]), tmp_path / "refused.onnx")
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(tmp_path / "refused.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    assert "Einsum of float16 is not supported" in error.value.nodes[0].describe()


def test_equations_expand_ellipses_and_refuse_what_does_not_fit() -> None:
    assert parse("...ii ->...i", [(3, 5, 5)]).output == "ai"
    contraction = parse("...ij,...jk", [(2, 1, 3, 4), (5, 4, 6)])
    assert contraction.operands == ("abij", "bjk") and contraction.output == "abik" and contraction.sizes["b"] == 5
    assert parse("ba", [(2, 3)]).output == "ab"  # implicit output: letters in alphabetical order
    assert parse("i...->i", [(2, 3, 4)]).summed == "ab"  # an ellipsis left out of the output is summed
    cases: list[tuple[str, list[tuple[int, ...]], str]] = [
        ("ij,jk", [(2, 3)], "2 operand terms for 1 inputs"),
        ("ijk", [(2, 3)], "rank 2, the term 'ijk' names 3 axes"),
        ("ij", [(2, 3, 4)], "rank 3, the term 'ij' names 2 axes"),
        ("i...j...", [(2, 3)], "more than one ellipsis"),
        ("i1", [(2, 3)], "is not a letter"),
        ("ij->ii", [(2, 3)], "repeats a letter"),
        ("ij->k", [(2, 3)], "'k' is not in any operand"),
        ("ij,jk->ik", [(2, 3), (4, 5)], "letter 'j' has size 3 and 4"),
        ("...i,...i", [(2, 3), (3, 3)], "do not broadcast"),
    ]
    for equation, shapes, message in cases:
        with pytest.raises(EquationError, match=message):
            parse(equation, shapes)
