"""A Cast to the type its input already has is a view; one that changes the type is a converting loop.

PyTorch's TorchScript exporter writes ``Cast(to=FLOAT)`` of float tensors
for ``.float()`` (timm's EfficientViT attention has a dozen), and generic-c
refused the whole network for them.  Such a Cast now costs nothing: its
output is its input's memory.
"""

from __future__ import annotations

from pathlib import Path

import onnx
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model, validate_model
from deeploy_core.plugins import PluginHost

SHAPE = [1, 4, 8]


def _relu_cast_relu(path: Path, to: int) -> Path:
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("Cast", ["r"], ["c"], name="cast", to=to),
             helper.make_node("Neg", ["c"], ["y"], name="neg")]
    graph = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)],
                              [helper.make_tensor_value_info("y", to, SHAPE)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_a_cast_to_its_own_type_is_a_view_and_the_network_matches_onnx_runtime(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = _relu_cast_relu(tmp_path / "cast.onnx", TensorProto.FLOAT)
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    layers = {layer["node"]: layer for layer in generated.report["layers"]}
    assert layers["cast"]["kernel"] == "Cast (alias)" and layers["cast"]["ops"] == 0
    assert layers["cast"]["arena_offsets"]["c"] == layers["relu"]["arena_offsets"]["r"]
    _, result = validate_model(model, CompileOptions(platform="generic-c"), generic_c_host, atol=0.0,
                               cache_dir=runtime_cache)
    assert result.ok and result.comparisons[0].scale > 0, [(c.max_abs_error, c.scale) for c in result.comparisons]


def test_a_cast_that_changes_the_type_is_a_converting_loop_and_matches_onnx_runtime(
    tmp_path: Path, generic_c_host: PluginHost, runtime_cache: Path
) -> None:
    model = _relu_cast_relu(tmp_path / "cast.onnx", TensorProto.INT32)
    _, generated = compile_model(model, CompileOptions(platform="generic-c"), generic_c_host)
    layers = {layer["node"]: layer for layer in generated.report["layers"]}
    assert layers["cast"]["kernel"] == "Cast converting"
    _, result = validate_model(model, CompileOptions(platform="generic-c"), generic_c_host, cache_dir=runtime_cache)
    assert result.ok, [(c.max_abs_error, c.scale) for c in result.comparisons]
