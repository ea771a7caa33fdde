"""Old-opset operators keep their meaning through the front end's version conversion.

Each case imports a small model written at an old opset, then runs the
canonical (opset-24) model and the original with ONNX Runtime (which
implements the old operators) and compares: the converter alone gives
``Resize`` half-pixel coordinates and makes Softmax-family ops normalise over
one axis instead of the coerced 2-D row.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.importer import canonicalise

RNG = np.random.default_rng(31)


def _model(node: onnx.NodeProto, opset: int, shape: list[int], initializers: list[onnx.TensorProto] | None = None,
           dtype: int = TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph([node], "legacy", [helper.make_tensor_value_info("x", dtype, shape)],
                              [helper.make_tensor_value_info("y", dtype, None)], initializers or [])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=7)


def _run_runtime(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def _canonical(model: onnx.ModelProto, output_shape: tuple[int, ...]) -> onnx.ModelProto:
    """The imported model (ONNX requires a shape on graph outputs: ``output_shape`` gives it)."""
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for dim in output_shape:
        copy.graph.output[0].type.tensor_type.shape.dim.add().dim_value = dim
    return canonicalise(copy).model


def _scales(values: list[float]) -> list[onnx.TensorProto]:
    return [numpy_helper.from_array(np.asarray(values, np.float32), "s")]


@pytest.mark.parametrize("opset, mode, scales, shape", [
    (7, "linear", [1.0, 1.0, 2.0, 2.0], [1, 1, 2, 2]),   # 2x2 -> 4x4 was off by 0.75 with half_pixel
    (7, "nearest", [1.0, 1.0, 2.0, 3.0], [1, 2, 2, 3]),
    (9, "linear", [1.0, 1.0, 1.5, 2.5], [1, 1, 3, 2]),
    (9, "nearest", [1.0, 1.0, 1.5, 2.5], [1, 1, 3, 4]),  # fractional scales: floor, not round
    (10, "nearest", [1.0, 1.0, 0.6, 0.5], [1, 1, 5, 4]),  # shrinking: ONNX Runtime takes the ceiling
    (10, "linear", [1.0, 1.0, 0.6, 1.7], [1, 1, 5, 3]),
])
def test_legacy_resize_keeps_asymmetric_coordinates(opset: int, mode: str, scales: list[float], shape: list[int]) -> None:
    op_type = "Resize" if opset >= 10 else "Upsample"
    if opset == 7:
        node = helper.make_node(op_type, ["x"], ["y"], mode=mode, scales=scales)
        model = _model(node, opset, shape)
    else:
        model = _model(helper.make_node(op_type, ["x", "s"], ["y"], mode=mode), opset, shape, _scales(scales))
    x = RNG.standard_normal(shape).astype(np.float32)
    expected = _run_runtime(model, x)
    canonical = _canonical(model, expected.shape)
    resize = next(node for node in canonical.graph.node if node.op_type == "Resize")
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in resize.attribute}
    assert attributes["coordinate_transformation_mode"] == b"asymmetric"
    np.testing.assert_allclose(_run_runtime(canonical, x), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(ReferenceEvaluator(canonical).run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)


def test_integer_upsample_matches_onnx_reference() -> None:
    model = _model(helper.make_node("Upsample", ["x", "s"], ["y"], mode="nearest"), 9, [1, 1, 2, 3],
                   _scales([1.0, 1.0, 2.0, 3.0]))
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(ReferenceEvaluator(_canonical(model, expected.shape)).run(None, {"x": x})[0], expected)


def test_nearest_resize_growing_and_shrinking_is_refused() -> None:
    model = _model(helper.make_node("Resize", ["x", "s"], ["y"], mode="nearest"), 10, [1, 1, 4, 4],
                   _scales([1.0, 1.0, 0.5, 2.0]))
    with pytest.raises(ModelImportError, match="enlarges some axes and shrinks others"):
        _canonical(model, (1, 1, 2, 8))


@pytest.mark.parametrize("op_type", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("axis", [0, 1])
def test_old_softmax_family_normalises_the_coerced_rows(op_type: str, axis: int) -> None:
    model = _model(helper.make_node(op_type, ["x"], ["y"], axis=axis), 11, [2, 3, 4])
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    x[0, 1, 2] = x[1, 2, 3] = 5.0  # a clear row maximum for Hardmax
    expected = _run_runtime(model, x)
    canonical = _canonical(model, expected.shape)
    np.testing.assert_allclose(ReferenceEvaluator(canonical).run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_run_runtime(canonical, x), expected, rtol=1e-5, atol=1e-6)


def test_old_softmax_on_the_last_axis_is_left_alone() -> None:
    model = _model(helper.make_node("Hardmax", ["x"], ["y"], axis=2), 11, [2, 3, 4])
    assert [node.op_type for node in _canonical(model, (2, 3, 4)).graph.node] == ["Hardmax"]


def test_opset_1_model_is_lifted() -> None:
    model = _model(helper.make_node("Not", ["x"], ["y"]), 1, [2, 3], dtype=TensorProto.BOOL)
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 2
    model.graph.output[0].type.tensor_type.shape.dim.add().dim_value = 3
    imported = canonicalise(model)
    assert imported.source_opset == 7
    x = np.array([[True, False, True], [False, False, True]])
    np.testing.assert_array_equal(ReferenceEvaluator(imported.model).run(None, {"x": x})[0], ~x)


def test_group_normalization_18_gets_per_channel_scale_and_bias() -> None:
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=2, epsilon=1e-5)
    parameters = [numpy_helper.from_array(np.array([1.5, -2.0], np.float32), "scale"),
                  numpy_helper.from_array(np.array([0.25, 3.0], np.float32), "bias")]
    model = _model(node, 18, [2, 6, 2, 3], parameters)
    x = RNG.standard_normal((2, 6, 2, 3)).astype(np.float32)
    expected = ReferenceEvaluator(model).run(None, {"x": x})[0]
    canonical = _canonical(model, expected.shape)
    assert [node.op_type for node in canonical.graph.node][-1] == "GroupNormalization"
    np.testing.assert_allclose(ReferenceEvaluator(canonical).run(None, {"x": x})[0], expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_run_runtime(canonical, x), expected, rtol=1e-4, atol=1e-5)


def test_group_normalization_18_with_uneven_groups_is_refused() -> None:
    node = helper.make_node("GroupNormalization", ["x", "scale", "bias"], ["y"], num_groups=4)
    parameters = [numpy_helper.from_array(np.ones(4, np.float32), "scale"),
                  numpy_helper.from_array(np.zeros(4, np.float32), "bias")]
    with pytest.raises(ModelImportError, match="6 channels do not split into 4 groups"):
        _canonical(_model(node, 18, [1, 6, 2, 2], parameters), (1, 6, 2, 2))
