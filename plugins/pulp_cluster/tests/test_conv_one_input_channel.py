"""DS-CNN's first convolution tiles into the cluster's default 64 KiB L1: the tiler counts its im2col as the kernel does.

The layer (1 -> 64 channels, a 10 x 4 window, stride 2, pads 4/1/5/1, 49 x 10
-> 25 x 5) has one input channel, so a tile cut to one output channel is a
depthwise convolution that needs no scratch, while any tile of two or more
channels gathers the whole im2col block (64 positions x 40 floats, on every one
of the 8 cores).  The tiler's probe on one channel took the output channels for
an axis the scratch shrinks with; it chose 22-channel tiles it counted at
44,000 bytes of scratch, the allocator was asked for 81,920 and the compile
stopped ("first-fit needs 98576 bytes, capacity is 65536").
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model, validate_with_data
from deeploy_core.plugins import PluginHost
from deeploy_core.tiling.cp_model import LayerModel
from deeploy_core.tiling.parallel import split_layer
from deeploy_core.tiling.tiles import build_tiles
from deeploy_core.tiling.unit_layout import unit_blocks
from deeploy_core.tiling.tiler_options import BUFFERING_SLOTS

L1_DEFAULT = 65536


def first_dscnn_conv() -> onnx.ModelProto:
    """Conv(1 -> 64, 10x4, stride 2, pads [4, 1, 5, 1], bias) -> Relu on a 1 x 1 x 49 x 10 input."""
    rng = np.random.default_rng(30)
    weights = numpy_helper.from_array((rng.standard_normal((64, 1, 10, 4)) * 0.2).astype(np.float32), "w")
    bias = numpy_helper.from_array((rng.standard_normal(64) * 0.1).astype(np.float32), "b")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["h"], strides=[2, 2], pads=[4, 1, 5, 1], name="conv"),
             helper.make_node("Relu", ["h"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "dscnn_conv1", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 49, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 25, 5])], [weights, bias])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def model_bytes(model: LayerModel, tile: dict[int, int]) -> int:
    """The left-hand side of the layer's memory constraint at ``tile`` (the sum the CP model bounds by L1)."""
    sizes = {axis: tile.get(axis, dim) for axis, dim in enumerate(model.out_shape)}
    tiles = math.prod(-(-dim // sizes[axis]) for axis, dim in enumerate(model.out_shape))
    memory = 4 * model.table_columns * tiles + model.extra_bytes + model.alignment - 1
    for term in model.tensors:
        elements = math.prod(max(1, e.size_of(sizes[e.axis])) if e.axis is not None else e.full for e in term.extents)
        memory += term.buffers * (term.element_bytes * elements + model.alignment - 1)
    return memory


def test_first_dscnn_conv_tiles_into_the_default_l1_and_matches_onnx_runtime(
        cluster_host: PluginHost, runtime_cache: Path, tmp_path: Path) -> None:
    path = tmp_path / "dscnn_conv1.onnx"
    onnx.save(first_dscnn_conv(), path)
    data = {"x": np.random.default_rng(1).standard_normal((1, 1, 49, 10)).astype(np.float32)}
    generated, result = validate_with_data(path, CompileOptions(platform="pulp-cluster"), cluster_host, data,
                                           cache_dir=runtime_cache)
    assert result.ok, [c for c in result.comparisons if not c.ok]
    level = generated.report["memory_levels"]["L1"]
    assert level["capacity"] == L1_DEFAULT and level["used"] <= L1_DEFAULT, level
    conv = next(layer for layer in generated.report["tiling"]["layers"] if layer["op"] == "Conv")
    assert conv["scratch_bytes"] > 0  # the im2col path, whose scratch the tiler had to count


def test_the_model_never_counts_the_conv_tiles_short(cluster_host: PluginHost, tmp_path: Path) -> None:
    """At tile sizes across every axis the CP model's memory for the conv is at least the bytes the allocator is
    then asked to place (tile buffers, table and every core's scratch): what fits the model fits L1."""
    path = tmp_path / "dscnn_conv1.onnx"
    onnx.save(first_dscnn_conv(), path)
    deployer, _ = compile_model(path, CompileOptions(platform="pulp-cluster"), cluster_host)
    layer = next(layer for layer in deployer.compilation.layers if layer.op_type == "Conv")
    model = next(model for model in deployer.layer_models() if model.name == layer.c_name)
    assert 1 not in {e.axis for t in model.tensors if t.block == "(scratch)" for e in t.extents}, \
        "the im2col does not shrink with the output channels"
    constraint, ctxt = deployer.constraint_of(layer), deployer.ctxt
    parallelism = deployer.setup.parallelism
    assert parallelism is not None
    cores = parallelism.cores
    checked = 0
    for channels in (64, 22, 8, 2, 1):
        for rows in (25, 13, 5, 2):
            for columns in (5, 2):
                tile = {0: 1, 1: channels, 2: rows, 3: columns}
                if math.prod(-(-dim // tile[axis]) for axis, dim in enumerate(model.out_shape)) > 64:
                    continue  # many tiles: slow to build, and the small tiles' slope is what the probes measure
                tiled = build_tiles(layer, ctxt, constraint, tile)
                splits = {layer.c_name: split_layer(tiled, ctxt, constraint, cores)}
                blocks = unit_blocks([tiled], None, ctxt, deployer.setup.hierarchy.alignment,
                                     BUFFERING_SLOTS[deployer.buffering], splits, deployer.scratch_copies)
                real = sum(blocks.sizes.values())
                assert model_bytes(model, tile) >= real, (tile, model_bytes(model, tile), real, blocks.sizes)
                checked += 1
    assert checked >= 20
