"""Softmax over a contiguous axis (normalization.c: inline exp, partial sums) against ONNX Runtime.

The row kernel replaces libm's expf with an inline polynomial that clamps its
argument at -87: masked entries (-inf, as attention masks write them) and very
negative ones must still come out as (almost) zero, rows whose length is not a
multiple of the eight-wide blocks must take the remainder path, and large
spreads must keep the relative accuracy of the largest terms.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost


def softmax_model(shape: tuple[int, ...]) -> onnx.ModelProto:
    node = helper.make_node("Softmax", ["x"], ["y"], axis=-1)
    graph = helper.make_graph([node], "softmax", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("shape", [(4, 64), (3, 13), (2, 5, 1000)])
def test_softmax_rows_match_onnx_runtime(shape: tuple[int, ...], generic_c_host: PluginHost, runtime_cache: Path,
                                         tmp_path: Path) -> None:
    rng = np.random.default_rng(sum(shape))
    x = (rng.standard_normal(shape) * 30).astype(np.float32)  # spreads of ~200: many terms below e^-87
    x.reshape(-1, shape[-1])[0, ::3] = -np.inf  # a masked row
    x.reshape(-1, shape[-1])[-1, :] = rng.uniform(-1e-3, 1e-3, shape[-1]).astype(np.float32)  # near-uniform row
    path = tmp_path / "softmax.onnx"
    onnx.save(softmax_model(shape), path)
    _, result = validate_with_data(path, CompileOptions(platform="generic-c"), generic_c_host, {"x": x},
                                   atol=1e-6, rtol=1e-5, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons), result.comparisons
    rows = result.outputs[0].reshape(-1, shape[-1])
    assert np.all(rows[0, ::3] < 1e-30)  # masked entries vanish
    np.testing.assert_allclose(rows.sum(axis=1), 1.0, rtol=1e-5)
