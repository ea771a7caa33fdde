"""CenterCropPad beyond ONNX's node tests (float32 only): other types, odd surpluses, size-one axes.

An odd difference between the sizes leaves the extra element at the end of
the axis, cropped or padded; both are here, on bool and int64 data, with the
expected outputs from ``onnx.reference``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

RNG = np.random.default_rng(31)
INPUTS: dict[str, np.ndarray] = {
    "mask": RNG.integers(0, 2, (2, 5, 4)).astype(bool),
    "ids": RNG.integers(-2 ** 62, 2 ** 62, (1, 4, 3), dtype=np.int64),
}
CASES = [  # (input, target shape, axes, output)
    ("mask", [4, 7], [1, 2], "mask_out"),  # crop 5 -> 4 (odd: the last row goes), pad 4 -> 7 (odd: 2 before, 1 after)
    ("ids", [2, 1, 6], None, "ids_out"),  # pad the batch axis 1 -> 2, crop to one element, pad 3 -> 6
]


def test_odd_crops_and_pads_of_bool_and_int64_match_the_reference(tmp_path: Path, generic_c_host: PluginHost,
                                                                  runtime_cache: Path) -> None:
    nodes, constants, outputs = [], [], []
    for name, target, axes, output in CASES:
        constants.append(numpy_helper.from_array(np.array(target, np.int64), f"{output}_shape"))
        node = helper.make_node("CenterCropPad", [name, f"{output}_shape"], [output])
        if axes is not None:
            node.attribute.append(helper.make_attribute("axes", axes))
        nodes.append(node)
        outputs.append(helper.make_tensor_value_info(output, helper.np_dtype_to_tensor_dtype(INPUTS[name].dtype), None))
    graph = helper.make_graph(nodes, "crops", [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype), value.shape)
        for name, value in INPUTS.items()], outputs, constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    expected = dict(zip([case[-1] for case in CASES], ReferenceEvaluator(model).run(None, INPUTS)))
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    onnx.save(model, tmp_path / "crops.onnx")
    _, generated = compile_model(tmp_path / "crops.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(), runtime_cache)
    actual, _ = run_network(executable, generated, {spec.name: INPUTS[spec.name] for spec in generated.inputs},
                            repeats=1)
    for spec, got in zip(generated.outputs, actual):
        want = expected[spec.name]
        assert np.array_equal(np.asarray(got).reshape(want.shape).astype(want.dtype), want), spec.name
