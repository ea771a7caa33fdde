"""A dynamic first input dimension is compiled for batch 1, with one notice per input (issue 30, item 1).

Keras exports every input with batch ``None`` (tf2onnx writes ``'unk__267'``), and a microcontroller runs one
sample at a time.  The notice names the input and the dimension and reaches report.json's warnings and, once,
``deeploy-core compile``'s stderr; ``--input-shape`` for that input sets another batch and silences it.  Any other
dynamic dimension (and a lone dynamic dimension of a vector) is still refused naming ``--input-shape``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.frontend import import_model
from deeploy_core.frontend.errors import ModelImportError

pytest.importorskip("deeploy_generic_c", reason="the generic C platform (plugins/generic_c) is not installed")


def notice(name: str, dim: str) -> str:
    return (f"notice: input {name!r} has a dynamic batch dimension {dim!r}: compiling for batch 1 "
            "(--input-shape sets another)")


def two_input_model(path: Path, a: list[int | str], b: list[int | str]) -> Path:
    """y = relu(a) + b, as tf2onnx names a Keras input (``serving_default_…:0``)."""
    graph = helper.make_graph(
        [helper.make_node("Relu", ["serving_default_input_1:0"], ["r"], name="relu"),
         helper.make_node("Add", ["r", "b"], ["y"], name="add")],
        "g",
        [helper.make_tensor_value_info("serving_default_input_1:0", TensorProto.FLOAT, a),
         helper.make_tensor_value_info("b", TensorProto.FLOAT, b)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, a)],
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def test_each_dynamic_batch_is_one_with_one_notice(tmp_path: Path) -> None:
    path = two_input_model(tmp_path / "m.onnx", ["unk__267", 3, 4], ["batch", 3, 4])
    imported = import_model(path)
    assert [tensor.shape for tensor in imported.graph.inputs] == [[1, 3, 4], [1, 3, 4]]
    assert imported.warnings == [notice("serving_default_input_1:0", "unk__267"), notice("b", "batch")]


def test_input_shape_sets_the_batch_without_notice(tmp_path: Path) -> None:
    path = two_input_model(tmp_path / "m.onnx", ["unk__267", 3, 4], ["batch", 3, 4])
    imported = import_model(path, {"serving_default_input_1:0": (2, 3, 4), "b": (2, 3, 4)})
    assert [tensor.shape for tensor in imported.graph.inputs] == [[2, 3, 4], [2, 3, 4]]
    assert imported.warnings == []
    partly = import_model(path, {"b": (1, 3, 4)})
    assert partly.warnings == [notice("serving_default_input_1:0", "unk__267")]


def test_an_unnamed_dynamic_batch_is_one_too(tmp_path: Path) -> None:
    path = two_input_model(tmp_path / "m.onnx", [1, 3, 4], [1, 3, 4])
    model = onnx.load(path)
    model.graph.input[0].type.tensor_type.shape.dim[0].Clear()  # neither a size nor a name
    onnx.save(model, path)
    imported = import_model(path)
    assert imported.graph.inputs[0].shape == [1, 3, 4]
    assert imported.warnings == ["notice: input 'serving_default_input_1:0' has a dynamic batch dimension: compiling "
                                 "for batch 1 (--input-shape sets another)"]


@pytest.mark.parametrize(("shape", "dim"), [([3, "length", 4], "length"), (["batch", "length", 4], "length"),
                                            (["n"], "n")])
def test_other_dynamic_dimensions_keep_the_error(tmp_path: Path, shape: list[int | str], dim: str) -> None:
    path = two_input_model(tmp_path / "m.onnx", shape, [1])
    with pytest.raises(ModelImportError, match=rf"^input 'serving_default_input_1:0' has dynamic dimension '{dim}': "
                                               r"fix it with --input-shape serving_default_input_1:0="):
        import_model(path)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "deeploy_core", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"})


def test_compile_prints_the_notice_once_and_report_keeps_it(tmp_path: Path) -> None:
    path = two_input_model(tmp_path / "m.onnx", ["unk__267", 3, 4], [1, 3, 4])
    out = tmp_path / "out"
    compiled = _cli("compile", str(path), "--platform", "generic-c", "-o", str(out), "-q")
    assert compiled.returncode == 0, compiled.stderr
    assert compiled.stderr.splitlines() == [notice("serving_default_input_1:0", "unk__267")]
    report = json.loads((out / "report.json").read_text())
    assert report["warnings"] == [notice("serving_default_input_1:0", "unk__267")]
    assert report["layers"][0]["inputs"][0]["shape"] == [1, 3, 4]
    analyzed = _cli("analyze", str(path), "--platform", "generic-c", "-q")
    assert analyzed.returncode == 0, analyzed.stderr
    assert analyzed.stdout.count("dynamic batch dimension") == 1 and "warning: notice" not in analyzed.stdout
    given = _cli("compile", str(path), "--platform", "generic-c", "-o", str(tmp_path / "given"), "-q",
                 "--input-shape", "serving_default_input_1:0=1x3x4")
    assert given.returncode == 0 and given.stderr == "", given.stderr
    assert json.loads((tmp_path / "given" / "report.json").read_text())["warnings"] == []


def test_compile_keeps_the_error_for_another_dynamic_dimension(tmp_path: Path) -> None:
    path = two_input_model(tmp_path / "m.onnx", ["unk__267", "length", 4], [1, 1, 4])
    refused = _cli("compile", str(path), "--platform", "generic-c", "-o", str(tmp_path / "out"), "-q")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        "error: input 'serving_default_input_1:0' has dynamic dimension 'length': fix it with "
        "--input-shape serving_default_input_1:0=1xLENGTHx4 (LENGTH: its size)"], refused.stderr
