"""Float reductions specialised by shape (ops/reduction/float32.py + dcg_reduce.h) against ONNX Runtime.

The generator turns an axis set into kept/reduced blocks and picks one of two
inner loops (reduced rows over a kept contiguous block, kept rows over a
reduced contiguous block) plus outer loops; each case below lands on a
different combination: inner or outer axes, alternating axes, every axis,
axes of length one (which carry no loop), negative axes, keepdims 0 and 1,
and rows long enough for the eight partial results and their remainder.
Every model runs the four kinds side by side on one input, so one build
checks ReduceSum, ReduceMean, ReduceMax and ReduceMin of a case.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_generic_c.ops.reduction.float32 import Block, axis_blocks

KINDS = ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin")

CASES: dict[str, tuple[tuple[int, ...], tuple[int, ...] | None]] = {
    "inner-axis": ((3, 4, 37), (2,)),
    "outer-axis": ((5, 3, 8), (0,)),
    "middle-axis": ((2, 49, 20), (1,)),
    "alternating": ((2, 3, 4, 5), (1, 3)),
    "alternating-outer": ((2, 3, 4, 5), (0, 2)),
    "all-axes": ((3, 5, 7), None),
    "negative-axes": ((4, 6, 10), (-1, -2)),
    "unit-axes": ((1, 6, 1, 9), (0, 2, 3)),
    "long-row": ((2, 1000), (1,)),
    "rank-one": ((13,), (0,)),
}


def reduction_model(shape: tuple[int, ...], axes: tuple[int, ...] | None, keepdims: int, opset: int) -> onnx.ModelProto:
    """The four reductions of one input over ``axes`` (opset 18: axes as an input; 13: as an attribute)."""
    nodes, initializers, outputs = [], [], []
    if axes is not None and opset >= 18:
        initializers.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], list(axes)))
    for kind in KINDS:
        attrs: dict[str, object] = {"keepdims": keepdims}
        inputs = ["x"]
        if axes is not None:
            if opset >= 18 or kind == "ReduceSum":
                inputs.append("axes")
            else:
                attrs["axes"] = list(axes)
        nodes.append(helper.make_node(kind, inputs, [kind.lower()], **attrs))
        outputs.append(helper.make_tensor_value_info(kind.lower(), TensorProto.FLOAT, None))
    if axes is not None and opset < 18:
        initializers = [helper.make_tensor("axes", TensorProto.INT64, [len(axes)], list(axes))]
    graph = helper.make_graph(nodes, "reductions", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return onnx.shape_inference.infer_shapes(model)


@pytest.fixture(scope="module")
def host(generic_c_host: PluginHost) -> PluginHost:
    return generic_c_host


@pytest.mark.parametrize("keepdims", [0, 1])
@pytest.mark.parametrize("name", sorted(CASES))
def test_reductions_match_onnx_runtime(name: str, keepdims: int, host: PluginHost, runtime_cache: Path,
                                       tmp_path: Path) -> None:
    shape, axes = CASES[name]
    opset = 13 if name in ("alternating", "long-row") else 18
    path = tmp_path / "model.onnx"
    onnx.save(reduction_model(shape, axes, keepdims, opset), path)
    data = {"x": np.random.default_rng(len(name)).standard_normal(shape).astype(np.float32) * 4}
    generated, result = validate_with_data(path, CompileOptions(platform="generic-c"), host, data,
                                           atol=1e-5, rtol=1e-5, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), [c for c in result.comparisons if not c.ok]
    code = generated.files["Network.c"]
    assert "dcg_reduce_" in code and "(const int32_t[])" not in code  # shapes are literals, not arrays


def test_blocks_merge_kinds_and_drop_unit_axes() -> None:
    assert axis_blocks((1, 49, 320), [False, True, False]) == [Block(49, True), Block(320, False)]
    assert axis_blocks((2, 3, 4, 5), [False, True, True, False]) == [Block(2, False), Block(12, True), Block(5, False)]
    assert axis_blocks((1, 6, 1, 9), [True, False, True, True]) == [Block(6, False), Block(9, True)]
    assert axis_blocks((1, 1), [True, True]) == []
