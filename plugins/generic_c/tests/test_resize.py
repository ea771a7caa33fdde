"""Resize beyond ONNX's node tests: integer and float64 data, N-D and channel-axis resizes, and refusals.

The node tests (run by the conformance suite) cover every mode, nearest_mode
and coordinate_transformation_mode on float32 images.  What they do not:
integer outputs (rounded half to even and saturated, as ONNX's reference
does), 64-bit saturation of an extrapolation value, float64 accumulation,
nearest on types without arithmetic (bool), 1-D and 3-D spatial resizes and
resizing the channel axis, antialiasing with many taps.  All run as one
model built under UBSan, so an out-of-range conversion in the generated C
fails the run; the expected outputs come from ``onnx.reference``, and every
output must equal them exactly: the kernel sums in the reference's order in
double (float64 and integer data).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.midend.unsupported import UnsupportedModelError
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network
from deeploy_generic_c.parsing.resize_plan import ResizeFormError, resized_axes

SANITIZED = ("-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")
RNG = np.random.default_rng(31)

INPUTS: dict[str, np.ndarray] = {
    # 1-D linear, asymmetric x2: the midpoints 0.5, 1.5, 2.5 round half to even (0, 2, 2)
    "ramp_u8": np.array([[[0, 1, 2, 3, 255, 255]]], np.uint8),
    # cubic overshoots at steps: int8 saturates at both ends
    "steps_i8": np.array([[[[-128, -128, 127, 127], [127, 127, -128, -128], [-128, 127, -128, 127]]]], np.int8),
    # 3-D spatial (trilinear) in float64
    "volume_f64": RNG.standard_normal((1, 2, 2, 3, 2)),
    # antialiased downsampling: 12 and 28 taps along the axis the reference resizes last, which numpy sums pairwise
    "wide_f64": RNG.standard_normal((1, 2, 3, 40)),
    "tall_f64": RNG.standard_normal((1, 1, 40, 5)),
    # nearest crop with an extrapolation value past int64's range: saturates to INT64_MIN
    "ids_i64": np.array([[[[2 ** 62, -(2 ** 62)], [7, -7]]]], np.int64),
    # nearest on bool, and on the channel axis of an int32 tensor
    "mask_bool": np.array([[[[True, False, True]]]]),
    "channels_i32": np.arange(-6, 6, dtype=np.int32).reshape(1, 3, 2, 2),
}


def _constant(name: str, values: np.ndarray) -> onnx.TensorProto:
    return numpy_helper.from_array(values, name)


NODES = [
    helper.make_node("Resize", ["ramp_u8", "", "ramp_scales"], ["ramp_out"], mode="linear",
                     coordinate_transformation_mode="asymmetric"),
    helper.make_node("Resize", ["steps_i8", "", "", "steps_sizes"], ["steps_out"], mode="cubic"),
    helper.make_node("Resize", ["volume_f64", "", "volume_scales"], ["volume_out"], mode="linear",
                     coordinate_transformation_mode="align_corners"),
    helper.make_node("Resize", ["wide_f64", "", "", "wide_sizes"], ["wide_out"], mode="linear", antialias=1),
    helper.make_node("Resize", ["tall_f64", "", "", "tall_sizes"], ["tall_out"], mode="cubic", antialias=1,
                     axes=[3, 2]),
    helper.make_node("Resize", ["ids_i64", "ids_roi", "", "ids_sizes"], ["ids_out"], mode="nearest",
                     coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1e30, axes=[2, 3]),
    helper.make_node("Resize", ["mask_bool", "", "", "mask_sizes"], ["mask_out"], mode="nearest", axes=[3]),
    helper.make_node("Resize", ["channels_i32", "", "", "channels_sizes"], ["channels_out"], mode="nearest",
                     nearest_mode="ceil", axes=[1]),
]
CONSTANTS = [
    _constant("ramp_scales", np.array([1, 1, 2], np.float32)),
    _constant("steps_sizes", np.array([1, 1, 5, 7], np.int64)),
    _constant("volume_scales", np.array([1, 1, 1.5, 2, 2.5], np.float32)),
    _constant("wide_sizes", np.array([1, 2, 2, 7], np.int64)),
    _constant("tall_sizes", np.array([4, 6], np.int64)),
    _constant("ids_roi", np.array([-0.5, 0, 1.5, 1], np.float32)),
    _constant("ids_sizes", np.array([4, 3], np.int64)),
    _constant("mask_sizes", np.array([7], np.int64)),
    _constant("channels_sizes", np.array([5], np.int64)),
]


def _model() -> onnx.ModelProto:
    reference = helper.make_model(helper.make_graph(
        NODES, "resizes", [helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
                           for name, value in INPUTS.items()],
        [helper.make_tensor_value_info(node.output[0], TensorProto.UNDEFINED, None) for node in NODES], CONSTANTS),
        opset_imports=[helper.make_opsetid("", 19)])
    return onnx.shape_inference.infer_shapes(reference, strict_mode=True)


def _expected(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """onnx.reference's outputs; its saturating cast knows no bool, so the bool resize runs on the uint8 view."""
    feeds = dict(INPUTS, mask_bool=INPUTS["mask_bool"].view(np.uint8))
    as_uint8 = onnx.ModelProto()
    as_uint8.CopyFrom(model)
    for value in as_uint8.graph.input:
        if value.name == "mask_bool":
            value.type.tensor_type.elem_type = TensorProto.UINT8
    del as_uint8.graph.output[:]
    as_uint8.graph.output.extend(helper.make_tensor_value_info(node.output[0], TensorProto.UNDEFINED, None)
                                 for node in NODES)
    outputs = ReferenceEvaluator(as_uint8).run(None, feeds)
    expected = {node.output[0]: value for node, value in zip(NODES, outputs)}
    expected["mask_out"] = expected["mask_out"].astype(bool)
    return expected


def test_integer_float64_bool_and_nd_resizes_match_the_reference(tmp_path: Path, generic_c_host: PluginHost,
                                                                 runtime_cache: Path) -> None:
    model = _model()
    onnx.save(model, tmp_path / "resizes.onnx")
    _, generated = compile_model(tmp_path / "resizes.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(SANITIZED), runtime_cache)
    actual, _ = run_network(executable, generated, {spec.name: INPUTS[spec.name] for spec in generated.inputs},
                            repeats=1)
    expected = _expected(model)
    assert expected["ramp_out"].reshape(-1)[:8].tolist() == [0, 0, 1, 2, 2, 2, 3, 129]  # the ties, rounded to even
    assert expected["ids_out"].min() == np.iinfo(np.int64).min  # the extrapolation value saturated
    for spec, got in zip(generated.outputs, actual):
        want = expected[spec.name]
        got = np.asarray(got).reshape(want.shape)
        assert np.array_equal(got.astype(want.dtype), want), (spec.name, got, want)  # float64 too: same sums


def _refusal(tmp_path: Path, host: PluginHost, node: onnx.NodeProto, x: onnx.ValueInfoProto,
             y_shape: list[int], constants: list[onnx.TensorProto], inputs: tuple[onnx.ValueInfoProto, ...] = ()) -> str:
    graph = helper.make_graph([node], "refused", [x, *inputs],
                              [helper.make_tensor_value_info("y", x.type.tensor_type.elem_type, y_shape)], constants)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)]), tmp_path / "refused.onnx")
    with pytest.raises(UnsupportedModelError) as error:
        compile_model(tmp_path / "refused.onnx", CompileOptions(platform="generic-c"), host)
    return error.value.nodes[0].describe()


def test_run_time_scales_linear_bool_and_antialiased_nearest_are_refused_by_name(tmp_path: Path,
                                                                                 generic_c_host: PluginHost) -> None:
    image = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])
    scales = helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])
    reason = _refusal(tmp_path, generic_c_host, helper.make_node("Resize", ["x", "", "scales"], ["y"]), image,
                      [1, 1, 4, 4], [], (scales,))
    assert "scales must be a constant" in reason
    double = [_constant("scales", np.array([1, 1, 2, 2], np.float32))]
    reason = _refusal(tmp_path, generic_c_host, helper.make_node("Resize", ["x", "", "scales"], ["y"], antialias=1),
                      image, [1, 1, 4, 4], double)
    assert "antialias=1 is defined for linear and cubic only" in reason
    mask = helper.make_tensor_value_info("x", TensorProto.BOOL, [1, 1, 2, 2])
    reason = _refusal(tmp_path, generic_c_host, helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear"),
                      mask, [1, 1, 4, 4], double)
    assert "linear interpolation of bool is not supported" in reason


def test_resize_forms_reduce_to_the_reference_sizes_and_refuse_contradictions() -> None:
    shape = (1, 3, 4, 6)
    changed, out = resized_axes(shape, None, np.array([3, 3]), [2, 3], None, "not_larger")
    assert out == (1, 3, 2, 3) and [plan.axis for plan in changed] == [2, 3] and changed[0].scale == 0.5
    changed, out = resized_axes(shape, None, np.array([3, 3]), [3, 2], None, "not_smaller")
    assert out == (1, 3, 3, 5) and changed[0].axis == 3  # max(3/6, 3/4) = 0.75 for both axes, sizes rounded
    changed, out = resized_axes(shape, None, np.array([5]), [-1], None, "stretch")
    assert out == (1, 3, 4, 5) and changed[0].axis == 3 and changed[0].scale == 5 / 6
    changed, out = resized_axes(shape, np.array([1, 1, 0.6, 2.5], np.float32), None, None, None, "stretch")
    assert out == (1, 3, 2, 15) and changed[0].scale == float(np.float32(0.6))
    for scales, sizes, axes, roi, policy, message in (
        (np.array([1, 1, 2, 2], np.float32), np.array([1, 3, 8, 12]), None, None, "stretch", "exactly one"),
        (None, None, None, None, "stretch", "exactly one"),
        (np.array([2, 2], np.float32), None, None, None, "stretch", "scales has 2 values, expected 4"),
        (np.array([2, 0], np.float32), None, [2, 3], None, "stretch", "must all be positive"),
        (None, np.array([3, 3]), [2, 2], None, "stretch", "repeat an axis"),
        (None, np.array([3, 3]), [2, 4], None, "stretch", "axis 4 is out of range"),
        (None, np.array([3, 3]), [2, 3], np.zeros(2, np.float32), "stretch", "roi has 2 values, expected 4"),
        (None, np.array([3, 3]), [2, 3], None, "fit", "keep_aspect_ratio_policy='fit'"),
    ):
        with pytest.raises(ResizeFormError, match=message):
            resized_axes(shape, scales, sizes, axes, roi, policy)
