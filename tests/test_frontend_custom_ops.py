"""Ops without an ONNX schema (issue 19, item 1): refused in the unsupported-op report unless claimed and declared.

A network of Deeploy dialect ops and a vendor op that nothing claims must end in the unsupported-op report
(every node, its op and domain, where it is supported) with exit 2, never in onnx's checker message.  An op that
an operator plugin claims and declares (``com.example::RowSum``, ``tests/support/row_sum_plugin.py``) is typed
by its declaration, which downstream standard ops are shaped from, and its compiled C matches numpy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.testing.c_flags import strict_flags
from deeploy_core.validate import Toolchain
from tests.support.bundled_platforms import host_with
from tests.support.row_sum_plugin import RowSumPlugin, row_sum_network, row_sum_reference


def unclaimed_network(path: Path) -> Path:
    """iGroupNorm → IntegerMedian → com.example::Foo → Add: three ops no ONNX schema and no plugin knows."""
    nodes = [helper.make_node("iGroupNorm", ["x"], ["a"], name="norm"),
             helper.make_node("IntegerMedian", ["a"], ["b"], name="mean", axes=[2]),
             helper.make_node("Foo", ["b"], ["c"], name="foo", domain="com.example"),
             helper.make_node("Add", ["x", "c"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "unclaimed", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    onnx.save(model, path)
    return path


def test_unclaimed_schemaless_ops_give_the_unsupported_op_report_through_the_cli(tmp_path: Path) -> None:
    model = unclaimed_network(tmp_path / "unclaimed.onnx")
    result = subprocess.run(
        [sys.executable, "-m", "deeploy_core", "compile", str(model), "--platform", "generic-c",
         "-o", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"},
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == ("error: 3 nodes are not supported on platform 'generic-c': 'norm' (iGroupNorm in the default "
                        "domain), 'mean' (IntegerMedian in the default domain), 'foo' (Foo in domain com.example)")
    assert len(lines) == 4, result.stderr
    for line, (name, op) in zip(lines[1:], (("norm", "iGroupNorm"), ("mean", "IntegerMedian"), ("foo", "Foo"))):
        assert line.strip().startswith(f"node '{name}' ({op} in ")
        assert "no ONNX schema" in line and "no installed platform or operator plugin supports it" in line
    assert "No Op registered" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


# -- a schema-less op claimed by an operator plugin -------------------------------------------------------------


def test_a_claimed_and_declared_op_is_shaped_by_its_declaration_and_runs_on_generic_c(tmp_path: Path) -> None:
    model = row_sum_network(tmp_path / "row_sum.onnx")
    x = np.random.default_rng(19).standard_normal((4, 3, 6)).astype(np.float32)
    generated, result = validate_with_data(model, CompileOptions(platform="generic-c"), host_with(RowSumPlugin("generic-c")),
                                           {"x": x}, [row_sum_reference(x)], atol=0.0,
                                           toolchain=Toolchain.from_environment(extra_flags=strict_flags()))
    assert result.ok, [(c.name, c.max_abs_error) for c in result.comparisons]
    layers = {layer["node"]: layer for layer in generated.report["layers"]}
    assert [layers[name]["kernel"] for name in ("sum1", "sum2")] == ["RowSum float32 (test plugin)"] * 2
    assert generated.files["Network.c"].count("dct_row_sum_f32(") == 2
    # The declaration shaped both sums, and onnx's inference broadcast the second one in the Sub after it.
    assert [layers["sum1"]["outputs"][0]["shape"], layers["sum2"]["outputs"][0]["shape"]] == [[4, 3, 1], [4, 3, 1]]
    assert [tensor["shape"] for tensor in layers["sub"]["inputs"]] == [[4, 3, 6], [4, 3, 1]]
    assert layers["sub"]["outputs"][0]["shape"] == [4, 3, 6]


def test_a_claimed_op_is_reported_where_it_is_supported(tmp_path: Path) -> None:
    model = row_sum_network(tmp_path / "row_sum.onnx")
    with pytest.raises(UnsupportedModelError) as caught:
        compile_model(model, CompileOptions(platform="generic-c"), host_with(RowSumPlugin("pulp-cluster")))
    assert str(caught.value).startswith("2 nodes are not supported on platform 'generic-c': 'sum1' (RowSum in domain "
                                        "com.example), 'sum2' (RowSum in domain com.example)")
    assert all(line.endswith("; supported on: pulp-cluster") for line in caught.value.details)


def test_a_claimed_op_without_a_declaration_is_refused_in_one_line(tmp_path: Path) -> None:
    model = row_sum_network(tmp_path / "row_sum.onnx")
    with pytest.raises(ModelImportError) as caught:
        compile_model(model, CompileOptions(platform="generic-c"), host_with(RowSumPlugin("generic-c", declared=False)))
    assert str(caught.value) == (
        "node 'sum1' (com.example.RowSum): the op has no ONNX schema and nothing declares its output types and "
        "shapes on platform 'generic-c': the platform or operator plugin that maps it must declare a CustomOpSchema")


def test_a_declaration_that_refuses_its_inputs_names_the_node(tmp_path: Path) -> None:
    nodes = [helper.make_node("RowSum", ["x"], ["y"], name="scalar_sum", domain="com.example")]
    graph = helper.make_graph(nodes, "scalar", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "scalar.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                      helper.make_opsetid("com.example", 1)]), path)
    with pytest.raises(ModelImportError) as caught:
        compile_model(path, CompileOptions(platform="generic-c"), host_with(RowSumPlugin("generic-c")))
    assert str(caught.value) == "node 'scalar_sum' (com.example.RowSum): RowSum needs an input of rank 1 or more"


def test_validate_gives_the_same_report_before_making_its_inputs(tmp_path: Path) -> None:
    model = unclaimed_network(tmp_path / "unclaimed.onnx")
    result = subprocess.run(
        [sys.executable, "-m", "deeploy_core", "validate", str(model), "--platform", "generic-c"],
        capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"},
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: 3 nodes are not supported on platform 'generic-c': 'norm' (iGroupNorm")
    assert "No Op registered" not in result.stderr and "Traceback" not in result.stderr
