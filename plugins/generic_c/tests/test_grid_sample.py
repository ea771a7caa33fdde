"""GridSample beyond ONNX's node tests: grids far outside the image (and NaN), cubic reflection, a 1-D image.

A grid value of 1e30 or NaN must not reach a float-to-integer conversion in
C (undefined behaviour, caught here by UBSan's float-cast-overflow): such
positions read zeros, as ONNX's reference gives.  Cubic sampling with
reflection and a single spatial axis are combinations the node tests leave
out.  Expected outputs come from ``onnx.reference``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.validate import Toolchain, build_executable, run_network

SANITIZED = ("-fsanitize=undefined,float-cast-overflow", "-fno-sanitize-recover=all")
RNG = np.random.default_rng(31)
IMAGE = RNG.standard_normal((1, 2, 4, 5)).astype(np.float32)
FAR = np.array([[[[1e30, 0.2], [-1e30, 0.1], [0.3, 1e30], [0.0, -1e30]]]], np.float32)
NAN = np.array([[[[np.nan, 0.2], [0.1, np.nan], [0.4, -0.3]]]], np.float32)
WIDE = RNG.uniform(-3, 3, (1, 3, 6, 2)).astype(np.float32)
LINE = RNG.standard_normal((2, 3, 7)).astype(np.float32)
LINE_GRID = RNG.uniform(-1.5, 1.5, (2, 5, 1)).astype(np.float32)
INPUTS = {"image": IMAGE, "far": FAR, "nan": NAN, "wide": WIDE, "line": LINE, "line_grid": LINE_GRID}
SAMPLES = [  # (image, grid, attributes, output)
    ("image", "far", {"mode": "linear"}, "far_out"),
    ("image", "nan", {"mode": "nearest"}, "nan_out"),
    ("image", "wide", {"mode": "cubic", "padding_mode": "reflection"}, "wide_out"),
    ("image", "wide", {"mode": "nearest", "padding_mode": "border", "align_corners": 1}, "border_out"),
    ("line", "line_grid", {"mode": "linear", "padding_mode": "reflection", "align_corners": 1}, "line_out"),
]


def test_far_and_nan_grids_read_zeros_and_uncommon_modes_match_the_reference(
        tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path) -> None:
    nodes = [helper.make_node("GridSample", [image, grid], [output], **attributes)  # type: ignore[arg-type]
             for image, grid, attributes, output in SAMPLES]
    graph = helper.make_graph(nodes, "samples", [
        helper.make_tensor_value_info(name, TensorProto.FLOAT, value.shape) for name, value in INPUTS.items()],
        [helper.make_tensor_value_info(output, TensorProto.FLOAT, None) for *_, output in SAMPLES])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    outputs: Any = ReferenceEvaluator(model).run(None, INPUTS)  # a list (typed loosely by onnx)
    expected = {output: np.asarray(value) for (*_, output), value in zip(SAMPLES, outputs)}
    assert not expected["far_out"].any() and not expected["nan_out"][..., :2].any()
    onnx.save(onnx.shape_inference.infer_shapes(model, strict_mode=True), tmp_path / "samples.onnx")
    _, generated = compile_model(tmp_path / "samples.onnx", CompileOptions(platform="generic-c"), generic_c_host)
    executable = build_executable(generated, tmp_path / "build", Toolchain.from_environment(SANITIZED), runtime_cache)
    actual, _ = run_network(executable, generated, {spec.name: INPUTS[spec.name] for spec in generated.inputs},
                            repeats=1)
    for spec, got in zip(generated.outputs, actual):
        want = expected[spec.name]
        np.testing.assert_allclose(np.asarray(got).reshape(want.shape), want, rtol=1e-5, atol=1e-6,
                                   err_msg=spec.name)
