"""MaxPool and Transpose written into the layer (ops/pooling/float32.py, ops/movement/basic.py) against ONNX Runtime.

Both used to call rank- and shape-generic kernels (dcg_maxpool2d_f32 ~1.3 KB with
its helpers, dcg_transpose 839 B of x86-64 code); the layer's own loops replace
them.  MaxPool: clipped windows on every border, strides, dilations, ceil_mode,
and 1-D, bit-exact (a maximum has no rounding).  Transpose: permutations that collapse to a copy or a 2-D transpose,
ones that do not, and integer element types.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_generic_c.ops.movement.basic import transpose_axes

POOLS = {
    "cct": ((1, 8, 16, 16), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]}),
    "asymmetric": ((2, 3, 11, 9), {"kernel_shape": [3, 4], "pads": [2, 0, 1, 3], "strides": [1, 2]}),
    "dilated": ((1, 2, 13, 14), {"kernel_shape": [3, 3], "pads": [2, 1, 2, 2], "dilations": [2, 3]}),
    "ceil": ((1, 2, 10, 10), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    "one-d": ((1, 4, 33), {"kernel_shape": [5], "pads": [2, 2], "strides": [3]}),
}


def _model(node: onnx.NodeProto, x_shape: tuple[int, ...], elem: int = TensorProto.FLOAT) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, list(x_shape))],
                              [helper.make_tensor_value_info("y", elem, None)])
    return onnx.shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))


@pytest.mark.parametrize("name", sorted(POOLS))
def test_inline_maxpool_matches_onnx_runtime(name: str, generic_c_host: PluginHost, runtime_cache: Path,
                                             tmp_path: Path) -> None:
    shape, attrs = POOLS[name]
    x = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    path = tmp_path / "pool.onnx"
    onnx.save(_model(helper.make_node("MaxPool", ["x"], ["y"], **attrs), shape), path)
    compiled, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, {"x": x},
                                          atol=0.0, rtol=0.0, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), result.comparisons
    assert "dcg_maxpool2d_f32" not in compiled.files["Network.c"]


TRANSPOSES = {
    "cct-tokens": ((1, 8, 64), [0, 2, 1], TensorProto.FLOAT),
    "heads-copy": ((1, 64, 1, 8), [0, 2, 1, 3], TensorProto.FLOAT),
    "keys": ((1, 64, 1, 8), [0, 2, 3, 1], TensorProto.FLOAT),
    "rank-4": ((2, 3, 4, 5), [3, 0, 2, 1], TensorProto.FLOAT),
    "reverse-int8": ((3, 4, 5), [2, 1, 0], TensorProto.INT8),
    "merged-int32": ((2, 3, 4, 5), [0, 2, 3, 1], TensorProto.INT32),
}


@pytest.mark.parametrize("name", sorted(TRANSPOSES))
def test_inline_transpose_matches_onnx_runtime(name: str, generic_c_host: PluginHost, runtime_cache: Path,
                                               tmp_path: Path) -> None:
    shape, perm, elem = TRANSPOSES[name]
    dtype = onnx.helper.tensor_dtype_to_np_dtype(elem)
    x = (np.random.default_rng(9).standard_normal(shape) * 50).astype(dtype)
    path = tmp_path / "transpose.onnx"
    onnx.save(_model(helper.make_node("Transpose", ["x"], ["y"], perm=perm), shape, elem), path)
    _, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, {"x": x},
                                   atol=0.0, rtol=0.0, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), result.comparisons
    _, generated = compile_model(path, CompileOptions(platform="generic-c"), generic_c_host)
    assert "dcg_transpose" not in generated.files["Network.c"]


def test_transpose_axes_collapse() -> None:
    assert transpose_axes([1, 64, 1, 8], [0, 2, 1, 3]) == ([512], [0])
    assert transpose_axes([1, 64, 1, 8], [0, 2, 3, 1]) == ([64, 8], [1, 0])
    assert transpose_axes([2, 3, 4, 5], [0, 2, 3, 1]) == ([2, 3, 20], [0, 2, 1])
    for shape, perm in (([2, 3, 4, 5], [3, 0, 2, 1]), ([3, 1, 4, 2], [3, 1, 0, 2]), ([1], [0])):
        sizes, order = transpose_axes(shape, perm)
        a = np.arange(int(np.prod(shape))).reshape(shape)
        np.testing.assert_array_equal(a.transpose(perm).reshape(-1), a.reshape(sizes).transpose(order).reshape(-1))
