"""Integer networks with float-declared inputs, without --input-type / --input-types-from.

``compile`` (which has no data) names the input, the integer kernel and both
options that fix it; ``validate --inputs`` takes the types from the arrays when
the network is an integer one, and leaves float networks alone — including
float networks whose sample inputs hold whole numbers.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.ir.dtypes import INT16, UINT8
from deeploy_core.lowering.integer_types import deeploy_input_type
from deeploy_core.midend.float_inputs import FloatInputError
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.testing.peer_tests import PeerTest, find_peer_tests, peer_tests_root
from deeploy_core.validate.data import graph_input_specs, load_npz_by_position

ROOT = peer_tests_root(Path(__file__).parent)
NO_PEERS = "Deeploy peer tests not found: ../shared/peer-tests/deeploy is missing"
ENV = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c", "COLUMNS": "200"}


def needs_integer_inputs(peer: PeerTest) -> bool:
    """Deeploy's rule gives some input of the peer's sample data an integer type."""
    specs = graph_input_specs(onnx.load(peer.model, load_external_data=False))
    return any(not deeploy_input_type(array).is_float for array in load_npz_by_position(peer.inputs, len(specs)))


INTEGER_PEERS = [peer for peer in find_peer_tests(ROOT) if needs_integer_inputs(peer)] if ROOT else []
FLOAT_PEERS = [peer for peer in find_peer_tests(ROOT) if peer.is_float] if ROOT else []


def peer(name: str) -> PeerTest:
    return next(test for test in INTEGER_PEERS + FLOAT_PEERS if test.name == name)


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deeploy_core", *map(str, args)], capture_output=True, text=True,
                          env=ENV)


def error_line(result: subprocess.CompletedProcess[str]) -> str:
    """The single line of a user error: exit code 2, no traceback, one ``error:`` line and no detail lines."""
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if line.startswith("error: ")]
    assert len(errors) == 1 and not any(line[:1].isspace() for line in lines), result.stderr
    return errors[0]


def type_notices(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The lines of stderr that say which input types ``validate`` took from the sample data."""
    return [line for line in result.stderr.splitlines() if line.startswith("input types from ")]


# -- compile without data: the error names the input, the kernel and both fixes ---------------------------------


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
@pytest.mark.parametrize("name, node, op", [
    ("Models/miniMobileNet", "Conv_0_rq", "RequantizedConv"),
    ("Kernels/Integer/Softmax/Regular", "iSoftmax_0", "iSoftmax"),
])
def test_compiling_an_integer_peer_without_types_names_both_fixes(name: str, node: str, op: str, tmp_path: Path) -> None:
    line = error_line(cli("compile", peer(name).model, "-o", tmp_path / "out"))
    assert line.startswith(f"error: input 'input' is float32 but feeds node '{node}' ({op}), an integer kernel;")
    assert "--input-type input=int8" in line and "--input-types-from SAMPLE.npz" in line
    assert not (tmp_path / "out").exists()


def transpose_requant(path: Path) -> Path:
    """x (float-declared) → Transpose → RequantShift: the integer kernel sits behind a data-movement op."""
    mul = numpy_helper.from_array(np.array([3.0], np.float32), "mul")
    add = numpy_helper.from_array(np.array([8.0], np.float32), "add")
    graph = helper.make_graph(
        [
            helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1], name="move"),
            helper.make_node("RequantShift", ["t", "mul", "add"], ["y"], name="requant",
                             div=helper.make_tensor("div", TensorProto.FLOAT, [], [16.0]),
                             n_levels_out=helper.make_tensor("n", TensorProto.FLOAT, [1], [256.0]), signed=1),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 3])],
        [mul, add],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_the_suggested_option_compiles_a_network_whose_kernel_reads_the_input_through_a_transpose(tmp_path: Path) -> None:
    model = transpose_requant(tmp_path / "chain.onnx")
    line = error_line(cli("compile", model, "-o", tmp_path / "out"))
    assert line.startswith("error: input 'x' is float32 but feeds node 'requant' (RequantShift), an integer kernel;")
    suggested = line.split("--input-type ", 1)[1].split(" ", 1)[0]
    fixed = cli("compile", model, "-o", tmp_path / "out", "--input-type", *shlex.split(suggested))
    assert fixed.returncode == 0, fixed.stderr
    assert (tmp_path / "out" / "Network.c").is_file()


# -- validate with sample data: types from the arrays for integer networks only ------------------------------------


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_the_integer_peers_are_discovered_from_their_data() -> None:
    names = {test.name for test in INTEGER_PEERS}
    assert {"Models/miniMobileNet", "Kernels/Integer/ReduceMean", "Kernels/Integer/Softmax/Regular"} <= names
    assert not names & {test.name for test in FLOAT_PEERS}


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
@pytest.mark.parametrize("test", INTEGER_PEERS, ids=[test.name for test in INTEGER_PEERS])
def test_every_integer_peer_validates_exactly_without_type_options(test: PeerTest, generic_c_host: PluginHost,
                                                                   runtime_cache: Path) -> None:
    notices: list[str] = []
    generated, result = validate_model(test.model, CompileOptions(platform="generic-c"), generic_c_host,
                                       inputs_npz=test.inputs, outputs_npz=test.outputs, atol=0.0,
                                       cache_dir=runtime_cache, notice=notices.append)
    for comparison in result.comparisons:
        assert comparison.ok, f"{comparison.name}: {comparison.mismatches}/{comparison.size} elements differ"
    changed = [spec for spec in generated.inputs if spec.dtype != "float32"]
    declared = {name: str(dtype) for name, dtype, _ in graph_input_specs(onnx.load(test.model))}
    retyped = [spec for spec in changed if declared[spec.name] == "float32"]
    if retyped:
        assert notices == ["input types from inputs.npz: " + ", ".join(f"{s.name}={s.dtype}" for s in retyped)]
    else:
        assert notices == []


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_validate_cli_types_an_integer_peer_from_its_inputs() -> None:
    test = peer("Models/miniMobileNet")
    result = cli("validate", test.model, "--inputs", test.inputs, "--outputs", test.outputs, "--atol", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    assert type_notices(result) == ["input types from inputs.npz: input=uint8"]
    assert "0/10" in result.stdout and "MISMATCH" not in result.stdout


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_validate_cli_leaves_a_float_peer_unchanged() -> None:
    test = peer("Kernels/FP32/Conv/Regular_2D_Bias")
    result = cli("validate", test.model, "--inputs", test.inputs, "--outputs", test.outputs)
    assert result.returncode == 0, result.stdout + result.stderr
    assert type_notices(result) == [] and "MISMATCH" not in result.stdout


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_an_explicit_input_type_wins_and_is_not_announced(generic_c_host: PluginHost, runtime_cache: Path) -> None:
    test = peer("Models/miniMobileNet")
    notices: list[str] = []
    generated, result = validate_model(test.model, CompileOptions(platform="generic-c", input_types={"input": INT16}),
                                       generic_c_host, inputs_npz=test.inputs, outputs_npz=test.outputs, atol=0.0,
                                       cache_dir=runtime_cache, notice=notices.append)
    assert [spec.dtype for spec in generated.inputs] == ["int16"] and notices == []
    assert result.ok


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_explicit_types_win_per_input_and_only_the_others_are_announced(
    generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path
) -> None:
    """Two integer inputs stored as int8: the one named explicitly keeps its type, the other takes the rule's."""
    test = peer("Kernels/Integer/Add/Regular")
    first, second = (name for name, _, _ in graph_input_specs(onnx.load(test.model)))
    arrays = load_npz_by_position(test.inputs, 2)
    np.savez(tmp_path / "int8.npz", *(array.astype(np.int8) for array in arrays))
    notices: list[str] = []
    generated, result = validate_model(test.model, CompileOptions(platform="generic-c", input_types={first: INT16}),
                                       generic_c_host, inputs_npz=tmp_path / "int8.npz", outputs_npz=test.outputs,
                                       atol=0.0, cache_dir=runtime_cache, notice=notices.append)
    assert [spec.dtype for spec in generated.inputs] == ["int16", "int8"]
    assert notices == [f"input types from int8.npz: {second}=int8"]
    assert result.ok


@pytest.mark.skipif(ROOT is None, reason=NO_PEERS)
def test_whole_numbers_stored_as_floats_reach_integer_kernels_through_the_fallback(
    generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path
) -> None:
    """The float-typed compile is refused by the first integer kernel; the arrays' integer types are used then."""
    test = peer("Models/miniMobileNet")
    [array] = load_npz_by_position(test.inputs, 1)
    np.savez(tmp_path / "floats.npz", array.astype(np.float32))
    with pytest.raises(FloatInputError):
        validate_model(test.model, CompileOptions(platform="generic-c"), generic_c_host, cache_dir=runtime_cache)
    notices: list[str] = []
    generated, result = validate_model(test.model, CompileOptions(platform="generic-c"), generic_c_host,
                                       inputs_npz=tmp_path / "floats.npz", outputs_npz=test.outputs, atol=0.0,
                                       cache_dir=runtime_cache, notice=notices.append)
    assert notices == ["input types from floats.npz: input=uint8"]
    assert [spec.dtype for spec in generated.inputs] == ["uint8"] and result.ok


# -- float networks whose sample inputs happen to hold whole numbers ------------------------------------------------


def float_cnn(path: Path) -> Path:
    """Conv with fractional weights → ReduceMean: a float network; integer arithmetic would change its results."""
    weights = np.random.default_rng(3).standard_normal((4, 3, 3, 3)).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv"),
            helper.make_node("ReduceMean", ["c"], ["y"], axes=[2, 3], keepdims=0, name="mean"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(weights, "w")],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def plain_mean(path: Path) -> Path:
    """A weightless float ReduceMean: it would also compile in integers, where its mean is rounded."""
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=0, name="mean")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 7])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


@pytest.mark.parametrize("make, shape, storage", [
    (float_cnn, (1, 3, 6, 6), np.float32),
    (float_cnn, (1, 3, 6, 6), np.uint8),
    (plain_mean, (2, 7), np.float32),
], ids=["cnn-float-storage", "cnn-uint8-storage", "weightless-mean-float-storage"])
def test_a_float_network_with_whole_valued_inputs_keeps_computing_in_float(
    make, shape: tuple[int, ...], storage: type, generic_c_host: PluginHost, runtime_cache: Path, tmp_path: Path
) -> None:
    model = make(tmp_path / "float.onnx")
    values = np.random.default_rng(5).integers(0, 256, shape).astype(storage)
    np.savez(tmp_path / "whole.npz", values)
    assert not deeploy_input_type(values).is_float, "the rule alone would type this input as an integer"
    notices: list[str] = []
    generated, result = validate_model(model, CompileOptions(platform="generic-c"), generic_c_host,
                                       inputs_npz=tmp_path / "whole.npz", atol=1e-4, rtol=1e-5,
                                       cache_dir=runtime_cache, notice=notices.append)
    assert notices == [] and [spec.dtype for spec in generated.inputs] == ["float32"]
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    assert not np.array_equal(result.outputs[0], np.round(result.outputs[0])), "the float results have fractions"
    as_integers = CompileOptions(platform="generic-c", input_types={"x": UINT8})
    if make is float_cnn:  # so with uint8 storage the integer types were tried, refused, and float kept
        with pytest.raises(UnsupportedModelError):
            compile_model(model, as_integers, generic_c_host)
    else:  # what the storage rule protects: in integers the mean would be rounded
        _, rounded = validate_model(model, as_integers, generic_c_host, inputs_npz=tmp_path / "whole.npz",
                                    atol=1e-4, cache_dir=runtime_cache)
        assert not rounded.ok


def int8_declared_dequantize(path: Path) -> Path:
    """An int8-declared input feeding a DequantizeLinear (an ONNX QDQ model, not a float-declared QuantLib one)."""
    nodes = [helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], name="dq")]
    scale, zero = numpy_helper.from_array(np.array(0.5, np.float32), "s"), numpy_helper.from_array(np.array(1, np.int8), "z")
    graph = helper.make_graph(nodes, "dq", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [scale, zero])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_an_input_type_equal_to_the_declared_integer_type_changes_nothing(tmp_path: Path) -> None:
    """Naming the declared type again used to retype the whole graph and stop at "no integer type rule"."""
    model = int8_declared_dequantize(tmp_path / "dq.onnx")
    plain = cli("compile", model, "-o", tmp_path / "plain")
    typed = cli("compile", model, "--input-type", "x=int8", "-o", tmp_path / "typed")
    assert plain.returncode == 0 and typed.returncode == 0, typed.stderr
    assert (tmp_path / "plain" / "Network.c").read_text() == (tmp_path / "typed" / "Network.c").read_text()

