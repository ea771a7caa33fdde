"""Model import: onnx's checker, inliner, version converter and strict shape inference, with clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.frontend import CANONICAL_OPSET, import_model
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.input_shapes import parse_input_shape
from deeploy_core.errors import DeeployError


def save(model: onnx.ModelProto, tmp_path: Path, name: str = "m.onnx") -> Path:
    path = tmp_path / name
    onnx.save(model, path)
    return path


def relu_model(shape: list, opset: int = 13) -> onnx.ModelProto:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def test_converts_to_the_canonical_opset_and_infers_shapes(tmp_path: Path) -> None:
    imported = import_model(save(relu_model([2, 3], opset=11), tmp_path))
    assert imported.source_opset == 11
    assert [o.version for o in imported.model.opset_import if o.domain == ""] == [CANONICAL_OPSET]
    assert imported.graph.outputs[0].shape == [2, 3]


def test_not_onnx(tmp_path: Path) -> None:
    path = tmp_path / "garbage.onnx"
    path.write_bytes(b"\x00\x01 definitely not protobuf \xff" * 10)
    with pytest.raises(ModelImportError, match="not a valid ONNX model"):
        import_model(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ModelImportError, match="no such file"):
        import_model(tmp_path / "absent.onnx")


def test_dynamic_dimension_needs_input_shape(tmp_path: Path) -> None:
    path = save(relu_model([3, "length"]), tmp_path)  # a dynamic batch (first) dimension is compiled for batch 1
    with pytest.raises(ModelImportError, match=r"input 'x' has dynamic dimension 'length': fix it with --input-shape x="):
        import_model(path)
    fixed = import_model(path, {"x": (3, 4)})
    assert fixed.graph.outputs[0].shape == [3, 4]


def test_input_shape_errors(tmp_path: Path) -> None:
    path = save(relu_model(["batch", 3]), tmp_path)
    with pytest.raises(ModelImportError, match="no input of that name"):
        import_model(path, {"nope": (1, 3)})
    with pytest.raises(ModelImportError, match="rank 3 given"):
        import_model(path, {"x": (1, 3, 3)})


def test_zero_dimension_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ModelImportError, match="dimension 0 = 0"):
        import_model(save(relu_model([0, 3]), tmp_path))


def test_parse_input_shape() -> None:
    assert parse_input_shape("in:0=1x3x32x32") == ("in:0", (1, 3, 32, 32))
    with pytest.raises(DeeployError):
        parse_input_shape("x=1xy")
    with pytest.raises(DeeployError):
        parse_input_shape("x=0x3")


def test_legacy_layernorm_and_microsoft_gelu_are_standardised(tmp_path: Path) -> None:
    scale = numpy_helper.from_array(np.ones(4, np.float32), "s")
    graph = helper.make_graph(
        [
            helper.make_node("LayerNormalization", ["x", "s"], ["n"], name="ln"),
            helper.make_node("Gelu", ["n"], ["y"], domain="com.microsoft", name="gelu"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        [scale],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12), helper.make_opsetid("com.microsoft", 1)])
    imported = import_model(save(model, tmp_path))
    assert [(n.op, n.domain or "") for n in imported.graph.nodes] == [("LayerNormalization", ""), ("Gelu", "")]


def test_declared_output_shape_that_disagrees_is_replaced_with_a_warning(tmp_path: Path) -> None:
    axes = numpy_helper.from_array(np.array([0, 1], np.int64), "axes")
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=0, name="mean")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
        [axes],
    )
    imported = import_model(save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), tmp_path))
    assert imported.graph.outputs[0].shape == []
    assert imported.warnings == ["output 'y': declared shape [1] disagrees with the inferred []; using the inferred shape"]


def test_undefined_input_is_refused_naming_node_and_op(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["missing"], ["y"], name="relu")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    with pytest.raises(ModelImportError, match=r"node 'relu' \(Relu\): input 0 'missing' is not a graph input"):
        import_model(save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path))


def test_local_functions_are_inlined(tmp_path: Path) -> None:
    function = helper.make_function(
        "local", "DoubleRelu", ["a"], ["b"],
        [helper.make_node("Relu", ["a"], ["t"]), helper.make_node("Relu", ["t"], ["b"])],
        [helper.make_opsetid("", 13)],
    )
    graph = helper.make_graph(
        [helper.make_node("DoubleRelu", ["x"], ["y"], domain="local", name="call")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, functions=[function],
                              opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("local", 1)])
    imported = import_model(save(model, tmp_path))
    assert [n.op for n in imported.graph.nodes] == ["Relu", "Relu"]


def test_external_data_outside_the_model_folder_is_refused(tmp_path: Path) -> None:
    model = relu_model([2])
    weight = numpy_helper.from_array(np.ones(2, np.float32), "w")
    weight.data_location = TensorProto.EXTERNAL
    entry = weight.external_data.add()
    entry.key, entry.value = "location", "../secret.bin"
    weight.ClearField("raw_data")
    model.graph.initializer.append(weight)
    with pytest.raises(ModelImportError, match="outside the model's folder"):
        import_model(save(model, tmp_path))


def test_deeploy_dialect_ops_pass_onnx_tools_and_keep_their_attributes(tmp_path: Path) -> None:
    mul = numpy_helper.from_array(np.array([3.0], np.float32), "mul")
    add = numpy_helper.from_array(np.array([1.0], np.float32), "add")
    div = helper.make_tensor("div", TensorProto.FLOAT, [], [256.0])
    graph = helper.make_graph(
        [helper.make_node("RequantShift", ["x", "mul", "add"], ["y"], name="rq", domain="PACTOps", div=div,
                          n_levels_out=helper.make_tensor("n", TensorProto.FLOAT, [1], [256.0]), signed=1)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 2, 3])],
        [mul, add],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 10), helper.make_opsetid("PACTOps", 1)])
    imported = import_model(save(model, tmp_path))
    [node] = imported.graph.nodes
    assert (node.op, node.domain or "") == ("RequantShift", "")
    assert sorted(node.attrs) == ["div", "n_levels_out", "signed"]
    assert [t.name for t in node.inputs] == ["x", "mul", "add"]
    assert imported.graph.outputs[0].shape == [1, 2, 3]


def test_attribute_style_pad_in_a_new_opset_is_repaired(tmp_path: Path) -> None:
    graph = helper.make_graph(
        [helper.make_node("Pad", ["x"], ["y"], pads=[0, 1, 0, 1], value=0.0, name="pad")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
    )
    imported = import_model(save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path))
    [node] = imported.graph.nodes
    assert len(node.inputs) == 3 and list(node.inputs[1].values) == [0, 1, 0, 1]


def test_input_shape_sets_only_dynamic_dimensions(tmp_path: Path) -> None:
    """A fixed dimension belongs to the model (its constants and the reference depend on it): changing it is refused."""
    path = save(relu_model(["batch", 3, 4]), tmp_path)
    assert import_model(path, {"x": (2, 3, 4)}).model.graph.input[0].type.tensor_type.shape.dim[0].dim_value == 2
    with pytest.raises(ModelImportError, match=r"fixes dimension 2 of 'x' to 4; --input-shape only sets dynamic"):
        import_model(path, {"x": (2, 3, 5)})
