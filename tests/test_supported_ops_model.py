"""``supported-ops --model M``: every node of M, per platform supported or not, and why not (issue 19, item 4).

Each reason has its own node: an op nothing maps, a mapped op whose kernels do
not bind the node's element types, a node the op's parser refuses, a
schema-less op no platform claims, and a claimed schema-less op without a
declaration (an operator plugin that registers one,
``tests/support/row_sum_plugin.py``).  The verdicts come from the
compiler's own front end, lowering and mapper, so they agree with what
``compile`` does on the same model.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.model_support import check_model
from deeploy_core.testing.cli_outcomes import CliLab, CliOutcome

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")
pytest.importorskip("deeploy_pulp_cluster", reason="the cluster platform (plugins/pulp_cluster) is not installed")

from tests.support.bundled_platforms import host_with  # noqa: E402
from tests.support.row_sum_plugin import RowSumPlugin, row_sum_network  # noqa: E402

PLATFORMS = ("generic-c", "pulp-cluster")
PLUGINS = ",".join(PLATFORMS)


def save(path: Path, nodes: list[onnx.NodeProto], inputs: list[onnx.ValueInfoProto],
         outputs: list[onnx.ValueInfoProto], initializers: Sequence[onnx.TensorProto] = (), opset: int = 17) -> Path:
    graph = helper.make_graph(nodes, path.stem, inputs, outputs, list(initializers))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def value(name: str, dtype: int, shape: list[int | str]) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, dtype, shape)


def mixed_model(path: Path) -> Path:
    """Two supported nodes and one node for each reason a standard op can fail."""
    weights = numpy_helper.from_array(np.ones((4, 4, 3, 3), np.float32), "w")
    deconv = numpy_helper.from_array(np.ones((2, 2, 3, 3, 3), np.float32), "w3")
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Det", ["c"], ["d"], name="det"),
             helper.make_node("Abs", ["i"], ["a"], name="abs_half"),
             helper.make_node("ConvTranspose", ["v", "w3"], ["t"], name="deconv_3d")]
    return save(path, nodes,
                [value("x", TensorProto.FLOAT, [1, 4, 8, 8]), value("i", TensorProto.FLOAT16, [2, 5]),
                 value("v", TensorProto.FLOAT, [1, 2, 4, 4, 4])],
                [value("d", TensorProto.FLOAT, [1]), value("a", TensorProto.FLOAT16, [2, 5]),
                 value("t", TensorProto.FLOAT, [1, 2, 6, 6, 6])], [weights, deconv])


def invoke(tmp_path: Path, *args: str | Path) -> CliOutcome:
    return CliLab(tmp_path / "runs", {"DEEPLOY_CORE_PLUGINS": PLUGINS}).invoke(["supported-ops", *map(str, args)])


def verdicts(outcome: CliOutcome) -> dict[str, dict[str, dict]]:
    """node name -> platform -> verdict, from ``--json``."""
    return {node["name"]: node["platforms"] for node in json.loads(outcome.stdout)["nodes"]}


def test_each_node_is_supported_or_says_why_not_on_every_installed_platform(tmp_path: Path) -> None:
    model = mixed_model(tmp_path / "mixed.onnx")
    outcome = invoke(tmp_path, "--model", model, "--json")
    assert outcome.exit_code == 2, outcome.describe()
    report = json.loads(outcome.stdout)
    assert report["platforms"] == list(PLATFORMS) and report["supported"] is False
    assert [(node["name"], node["op"], node["domain"]) for node in report["nodes"]] == [
        ("relu", "Relu", ""), ("conv", "Conv", ""), ("det", "Det", ""), ("abs_half", "Abs", ""),
        ("deconv_3d", "ConvTranspose", "")]
    found = verdicts(outcome)
    for platform in PLATFORMS:
        kinds = {name: found[name][platform]["kind"] for name in found}
        assert kinds == {"relu": "supported", "conv": "supported", "det": "no-mapper", "abs_half": "types",
                         "deconv_3d": "parser"}
        assert found["conv"][platform]["kernel"] == "Conv float32 (float32, float32, float32 -> float32)"
        assert "no mapper for op Det" in found["det"][platform]["reason"]
        types = found["abs_half"][platform]["reason"]
        assert "float16 -> float16" in types and "Abs float32" in types, types
        assert "3-D transposed convolution is not supported" in found["deconv_3d"][platform]["reason"]


def test_the_verdicts_agree_with_the_compile(tmp_path: Path) -> None:
    """The nodes the compile's unsupported-op report names are exactly those --model marks unsupported."""
    model = mixed_model(tmp_path / "mixed.onnx")
    host = host_with()
    with pytest.raises(UnsupportedModelError) as refused:
        compile_model(model, CompileOptions(platform="generic-c"), host)
    support = check_model(host, model, ("generic-c",))
    unsupported = {node.name for node, verdict in zip(support.nodes, support.verdicts["generic-c"])
                   if verdict is not None and not verdict.supported}
    assert unsupported == {node.node for node in refused.value.nodes}


def test_a_supported_model_exits_0_and_prints_one_row_per_node(tmp_path: Path) -> None:
    weights = numpy_helper.from_array(np.ones((6, 3), np.float32), "w")
    bias = numpy_helper.from_array(np.ones((3,), np.float32), "b")
    model = save(tmp_path / "mlp.onnx", [helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
                                         helper.make_node("Add", ["m", "b"], ["s"], name="add"),
                                         helper.make_node("Relu", ["s"], ["y"], name="relu")],
                 [value("x", TensorProto.FLOAT, [2, 6])], [value("y", TensorProto.FLOAT, [2, 3])], [weights, bias])
    outcome = invoke(tmp_path, "--model", model, "--platform", "generic-c")
    assert outcome.exit_code == 0, outcome.describe()
    lines = outcome.stdout.splitlines()
    assert lines[0] == "nodes of mlp.onnx on generic-c"
    assert lines[1].split() == ["node", "op", "domain", "generic-c", "why", "not"]
    assert [line.split()[:4] for line in lines[3:6]] == [["matmul", "MatMul", "-", "yes"], ["add", "Add", "-", "yes"],
                                                        ["relu", "Relu", "-", "yes"]]
    assert lines[6:] == ["generic-c: 3 of 3 nodes supported"]
    # Lowering fuses MatMul + Add into one Gemm: the Add row carries its kernel, the MatMul was fused away.
    found = verdicts(invoke(tmp_path, "--model", model, "--platform", "generic-c", "--json"))
    assert found["add"]["generic-c"]["reason"] == "lowered to Gemm"
    assert found["add"]["generic-c"]["kernel"].startswith("Gemm float32")
    assert found["matmul"]["generic-c"] == {"supported": True, "kind": "lowered", "kernel": "",
                                            "reason": "fused by lowering into matmul_gemm (Gemm)"}


def requantised_conv(path: Path) -> Path:
    """Conv -> RequantShift as QuantLib exports it (every tensor declared float, integer values), and a Transpose
    that reads the Conv's input too (so "the node that reads its input" alone would not find the fused layer)."""
    weights = numpy_helper.from_array(np.ones((4, 2, 3, 3), np.float32), "w")
    mul = numpy_helper.from_array(np.full((1, 4, 1, 1), 3, np.float32), "mul")
    add = numpy_helper.from_array(np.full((1, 4, 1, 1), 8, np.float32), "add")
    nodes = [helper.make_node("Transpose", ["x"], ["t"], name="side", perm=[0, 1, 3, 2]),
             helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("RequantShift", ["c", "mul", "add"], ["y"], name="rqs", div=16, signed=1,
                              n_levels_out=256)]
    return save(path, nodes, [value("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                [value("t", TensorProto.FLOAT, [1, 2, 6, 6]), value("y", TensorProto.FLOAT, [1, 4, 6, 6])],
                [weights, mul, add])


def test_a_node_fused_into_an_unsupported_layer_shares_its_verdict(tmp_path: Path) -> None:
    """Lowering fuses Conv + RequantShift; fed a float input, the fused integer kernel refuses it: both rows say so."""
    model = requantised_conv(tmp_path / "rq.onnx")
    as_declared = verdicts(invoke(tmp_path, "--model", model, "--platform", "generic-c", "--json"))
    rqs, conv = as_declared["rqs"]["generic-c"], as_declared["conv"]["generic-c"]
    assert (rqs["kind"], conv["kind"]) == ("types", "types")
    assert "float32" in rqs["reason"] and "--input-type" in rqs["reason"]
    assert conv["reason"].startswith("fused by lowering into conv_rq (RequantizedConv), which is not supported: ")
    assert as_declared["side"]["generic-c"]["kind"] == "supported"
    typed = invoke(tmp_path, "--model", model, "--platform", "generic-c", "--input-type", "x=int8", "--json")
    assert typed.exit_code == 0, typed.describe()
    assert verdicts(typed)["rqs"]["generic-c"]["reason"] == "lowered to RequantizedConv"
    assert verdicts(typed)["conv"]["generic-c"]["reason"] == "fused by lowering into conv_rq (RequantizedConv)"


def test_a_schemaless_op_nobody_claims_stops_the_front_end_and_the_other_nodes_are_not_tried(tmp_path: Path) -> None:
    model = save(tmp_path / "median.onnx", [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                                            helper.make_node("IntegerMedian", ["r"], ["y"], name="median")],
                 [value("x", TensorProto.FLOAT, [4])], [value("y", TensorProto.FLOAT, [4])])
    outcome = invoke(tmp_path, "--model", model, "--json")
    assert outcome.exit_code == 2, outcome.describe()
    found = verdicts(outcome)
    for platform in PLATFORMS:
        assert found["median"][platform]["kind"] == "no-mapper"
        assert found["median"][platform]["reason"] == ("the op has no ONNX schema and is not supported on this "
                                                       "platform; no installed platform or operator plugin supports it")
        assert found["relu"][platform]["kind"] == "not-checked"
        assert "because of 'median'" in found["relu"][platform]["reason"]
    text = invoke(tmp_path, "--model", model).stdout.splitlines()
    assert text[3].split()[:5] == ["relu", "Relu", "-", "?", "?"]
    assert text[4].split()[:5] == ["median", "IntegerMedian", "-", "no", "no"]


def test_a_claimed_schemaless_op_without_a_declaration_says_so(tmp_path: Path) -> None:
    model = row_sum_network(tmp_path / "row_sum.onnx")
    support = check_model(host_with(RowSumPlugin("generic-c", declared=False)), model, PLATFORMS)
    generic = {node.name: verdict for node, verdict in zip(support.nodes, support.verdicts["generic-c"])}
    cluster = {node.name: verdict for node, verdict in zip(support.nodes, support.verdicts["pulp-cluster"])}
    assert generic["sum1"].kind == generic["sum2"].kind == "no-declaration"  # type: ignore[union-attr]
    assert "must declare a CustomOpSchema" in generic["sum1"].reason  # type: ignore[union-attr]
    assert cluster["sum1"].kind == "no-mapper"  # type: ignore[union-attr]
    assert cluster["sum1"].reason.endswith("supported on: generic-c")  # type: ignore[union-attr]
    declared = check_model(host_with(RowSumPlugin("generic-c")), model, ("generic-c",))
    assert declared.all_supported()
    assert [verdict and verdict.kernel for verdict in declared.verdicts["generic-c"][1:3]] == \
        ["RowSum float32 (test plugin) (float32 -> float32)"] * 2


def dynamic_add(path: Path) -> Path:
    """x + 3 with a dynamic length: its input type picks the kernel, its shape must be fixed to import at all
    (a dynamic first dimension alone would be compiled for batch 1)."""
    three = numpy_helper.from_array(np.full((4,), 3, np.float32), "three")
    return save(path, [helper.make_node("Add", ["x", "three"], ["y"], name="add")],
                [value("x", TensorProto.FLOAT, ["n", 4, "n"])], [value("y", TensorProto.FLOAT, ["n", 4, "n"])],
                [three])


def test_input_shapes_and_types_apply_as_in_compile(tmp_path: Path) -> None:
    model = dynamic_add(tmp_path / "add.onnx")
    dynamic = invoke(tmp_path, "--model", model, "--platform", "generic-c", "--json")
    assert dynamic.exit_code == 2 and verdicts(dynamic)["add"]["generic-c"]["kind"] == "not-checked"
    assert "--input-shape" in verdicts(dynamic)["add"]["generic-c"]["reason"]
    fixed = invoke(tmp_path, "--model", model, "--platform", "generic-c", "--input-shape", "x=2x4x4", "--json")
    assert fixed.exit_code == 0, fixed.describe()
    assert verdicts(fixed)["add"]["generic-c"]["kernel"].startswith("Add float32")
    typed = invoke(tmp_path, "--model", model, "--platform", "generic-c", "--input-shape", "x=2x4x4",
                   "--input-type", "x=int8", "--json")
    assert typed.exit_code == 0, typed.describe()
    assert verdicts(typed)["add"]["generic-c"]["kernel"].startswith("Add integer")


def integer_add(path: Path) -> Path:
    """A float-declared integer network (Deeploy's dialect): Add then RequantShift, whose kernel is integer only."""
    mul = numpy_helper.from_array(np.full((1, 4, 1), 3, np.float32), "mul")
    add = numpy_helper.from_array(np.zeros((1, 4, 1), np.float32), "add")
    return save(path, [helper.make_node("Add", ["x", "x"], ["s"], name="add"),
                       helper.make_node("RequantShift", ["s", "mul", "add"], ["y"], name="rqs", div=4, n_levels=256,
                                        signed=1)],
                [value("x", TensorProto.FLOAT, [1, 4, 8])], [value("y", TensorProto.FLOAT, [1, 4, 8])], [mul, add])


def test_an_integer_network_declared_float_gets_one_hint_and_takes_input_types_from_data(tmp_path: Path) -> None:
    """Issue 33 point 3: the cause was repeated in every row's long cell; now one hint line, and the fix works."""
    model = integer_add(tmp_path / "integer.onnx")
    untyped = invoke(tmp_path, "--model", model)
    assert untyped.exit_code == 2, untyped.describe()
    assert "needs its input types" not in untyped.stdout, "the cause is said once, not in every cell"
    assert untyped.stderr.splitlines() == [
        "hint: 1 node(s) fail because a graph input is declared float in an integer network (Deeploy's dialect): "
        "give its types with --input-types-from SAMPLE.npz or --input-type NAME=TYPE"], untyped.stderr
    np.savez(tmp_path / "sample.npz", np.arange(32, dtype=np.float32).reshape(1, 4, 8) - 16)
    typed = invoke(tmp_path, "--model", model, "--input-types-from", tmp_path / "sample.npz", "--json")
    assert typed.exit_code == 0, typed.describe()
    assert all(platform["supported"] for node in verdicts(typed).values() for platform in node.values())
    assert "integer" in verdicts(typed)["rqs"]["generic-c"]["kernel"]


@pytest.mark.parametrize(("args", "message"), [
    (("--model", "missing.onnx"), r"missing.onnx: no such file"),
    (("--input-type", "x=int8"), r"--input-type applies to --model only"),
    (("--input-types-from", "{model}"), r"--input-types-from applies to --model only"),
    (("--model", "{model}", "--platform", "nowhere"), r"no platform named 'nowhere'"),
    (("--model", "{model}", "--input-type", "x=int3"), r"int3"),
])
def test_bad_input_gives_one_error_line(args: tuple[str, ...], message: str, tmp_path: Path) -> None:
    import re

    model = save(tmp_path / "relu.onnx", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
                 [value("x", TensorProto.FLOAT, [4])], [value("y", TensorProto.FLOAT, [4])])
    outcome = invoke(tmp_path, *(arg.format(model=model) for arg in args))
    assert outcome.exit_code == 2 and "Traceback" not in outcome.stderr, outcome.describe()
    [line] = outcome.error_lines
    assert re.search(message, line), line
