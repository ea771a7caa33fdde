"""A float conv network's im2col scratch is tiled with its layer on the cluster (issue 21, item 3).

Two 3x3 convolutions of 16 channels on 32 x 32: the whole-layer im2col of one
of them is 144 x 1024 floats (576 KiB), more than the cluster's 512 KiB L2.
Before the scratch was tiled the home level kept that buffer for every layer
and the compile stopped with "L2 needs at least 808420 bytes"; now the kernels'
scratch lives in L1, sized for a tile (every core's copy), the home arena holds
activations only, and the result is the untiled generic-c build's, bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost

L2_DEFAULT = 524288


def sixteen_channel_convs(size: int = 32) -> onnx.ModelProto:
    """Conv(16 -> 16, 3x3, pad 1, bias) -> Relu -> Conv(16 -> 16, 3x3, pad 1) on a 1 x 16 x size x size input."""
    rng = np.random.default_rng(21)
    weights = [numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32), name)
               for name in ("w1", "w2")]
    bias = numpy_helper.from_array(rng.standard_normal(16).astype(np.float32), "b1")
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"], pads=[1, 1, 1, 1], name="conv1"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Conv", ["r", "w2"], ["y"], pads=[1, 1, 1, 1], name="conv2")]
    graph = helper.make_graph(nodes, "conv16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, size, size])],
                              [*weights, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_sixteen_channel_conv_fits_default_l2_and_matches_untiled(cluster_host: PluginHost, runtime_cache: Path,
                                                                   tmp_path: Path) -> None:
    path = tmp_path / "conv16.onnx"
    onnx.save(sixteen_channel_convs(), path)
    data = {"x": np.random.default_rng(0).standard_normal((1, 16, 32, 32)).astype(np.float32)}
    untiled, reference = validate_with_data(path, CompileOptions(platform="generic-c"), cluster_host, data,
                                            atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert all(c.ok for c in reference.comparisons)
    tiled, result = validate_with_data(path, CompileOptions(platform="pulp-cluster"), cluster_host, data,
                                       atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert all(c.ok for c in result.comparisons)
    np.testing.assert_array_equal(result.outputs[0], reference.outputs[0])  # bit-exact with the untiled build

    report = tiled.report
    home = report["memory_levels"]["L2"]
    assert home["capacity"] == L2_DEFAULT and home["used"] <= L2_DEFAULT, home
    assert home["arena"] == report["memory"]["arena_bytes"] <= 3 * 16 * 32 * 32 * 4  # activations only
    assert [layer["scratch_bytes"] for layer in report["layers"]] == [0, 0, 0]
    # The scratch per layer, in L1: each conv's is what its largest tile's kernel asks for, times the cores.
    scratch = {layer["layer"]: layer["scratch_bytes"] for layer in report["tiling"]["layers"]}
    assert scratch["relu"] == 0
    for name in ("conv1", "conv2"):
        assert 0 < scratch[name] <= report["memory_levels"]["L1"]["capacity"]
        offsets = report["tiling"]["memory_map"][next(t["key"] for t in report["tiling"]["layers"] if t["layer"] == name)]
        assert "scratch:scratch" in offsets

    # Untiled, the conv's im2col is bounded too: blocks of output positions, not the whole layer's 576 KiB.
    assert 0 < untiled.report["layers"][0]["scratch_bytes"] <= 144 * 64 * 4


def test_a_deep_conv_is_a_direct_loop_when_tiled(cluster_host: PluginHost, runtime_cache: Path, tmp_path: Path) -> None:
    """128 -> 128 channels, 3x3, on 4 x 4: one output position's im2col column is 4.5 KiB, eight cores' copies 36 KiB
    beside 4.5 KiB of weights per output channel.  Tiled, such a conv (more than 2 KiB per position: ResNet-18's from
    64 channels on) is a direct loop without scratch, so it tiles into the default 64 KiB L1, matching the untiled
    build; the untiled build keeps its bounded im2col."""
    rng = np.random.default_rng(3)
    weights = numpy_helper.from_array((rng.standard_normal((128, 128, 3, 3)) * 0.05).astype(np.float32), "w")
    graph = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], name="deep")], "deep",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 128, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128, 4, 4])], [weights])
    path = tmp_path / "deep.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    data = {"x": rng.standard_normal((1, 128, 4, 4)).astype(np.float32)}
    untiled, reference = validate_with_data(path, CompileOptions(platform="generic-c"), cluster_host, data,
                                            atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    tiled, result = validate_with_data(path, CompileOptions(platform="pulp-cluster"), cluster_host, data,
                                       atol=1e-4, rtol=1e-4, cache_dir=runtime_cache)
    assert reference.ok and result.ok
    np.testing.assert_allclose(result.outputs[0], reference.outputs[0], rtol=1e-5, atol=1e-5)
    assert "dcg_conv2d_f32(" in untiled.files["Network.c"] and "dcg_conv2d_f32(" not in tiled.files["Network.c"]
    assert tiled.report["tiling"]["layers"][0]["scratch_bytes"] == 0
