"""A multi-output network around Split (the pattern of timm attention blocks) against ONNX Runtime.

Split along the channel axis (the outermost non-unit one, so its outputs are
views into the input) with explicit sizes feeds two branches that meet again
in Concat; a second Split (opset 18 ``num_outputs``) cuts the last axis
into halves that are added, and one of its outputs is also a graph output.
It runs on generic-c untiled and tiled (L1 16000, single and double
buffering) and on the cluster, so Split's copies are checked wherever the
tiler places them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, validate_with_data
from deeploy_core.plugins import PluginHost


def split_network(path: Path) -> Path:
    float_info = helper.make_tensor_value_info
    nodes = [
        helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=1),
        helper.make_node("Relu", ["a"], ["c"]),
        helper.make_node("Mul", ["c", "c"], ["c2"]),
        helper.make_node("Concat", ["c", "c2"], ["y1"], axis=1),
        helper.make_node("Sigmoid", ["b"], ["d"]),
        helper.make_node("Split", ["d"], ["e", "f"], axis=-1, num_outputs=2),
        helper.make_node("Add", ["e", "f"], ["y2"]),
        helper.make_node("Identity", ["f"], ["y3"]),
    ]
    graph = helper.make_graph(
        nodes, "split_branches", [float_info("x", TensorProto.FLOAT, [1, 6, 8, 16])],
        [float_info("y1", TensorProto.FLOAT, [1, 4, 8, 16]), float_info("y2", TensorProto.FLOAT, [1, 4, 8, 8]),
         float_info("y3", TensorProto.FLOAT, [1, 4, 8, 8])],
        [numpy_helper.from_array(np.array([2, 4], np.int64), "sizes")],
    )
    for index, node in enumerate(graph.node):
        node.name = f"{node.op_type.lower()}_{index}"
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, path)
    return path


SETUPS = {
    "generic-c untiled": CompileOptions(platform="generic-c"),
    "generic-c L1 16000 single": CompileOptions(platform="generic-c", level_sizes={"L1": 16000}, buffering="single"),
    "generic-c L1 16000 double": CompileOptions(platform="generic-c", level_sizes={"L1": 16000}, buffering="double"),
    "pulp-cluster L1 16000 single": CompileOptions(platform="pulp-cluster", level_sizes={"L1": 16000}, buffering="single"),
    "pulp-cluster L1 16000 double": CompileOptions(platform="pulp-cluster", level_sizes={"L1": 16000}, buffering="double"),
}


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_split_branches_match_onnx_runtime(setup: str, cluster_host: PluginHost, runtime_cache: Path,
                                           tmp_path: Path) -> None:
    model = split_network(tmp_path / "split.onnx")
    x = np.random.default_rng(3).standard_normal((1, 6, 8, 16)).astype(np.float32)
    generated, result = validate_with_data(model, SETUPS[setup], cluster_host, {"x": x}, atol=1e-5, cache_dir=runtime_cache)
    assert [layer["op"] for layer in generated.report["layers"]].count("Split") == 2
    code = "\n".join(generated.files.values())
    # The channel Split is a pair of views (no copy); only the last-axis Split copies, once per output.
    assert "every output is a view into its input" in code and code.count("dcg_slice(") == 2
    assert len(result.comparisons) == 3
    for comparison in result.comparisons:
        assert comparison.ok and not comparison.too_small, comparison
        assert comparison.cosine > 0.999999
    # The branches really differ: y3 is the second half of a Sigmoid, y2 adds both halves.
    assert not np.allclose(result.outputs[1], result.outputs[2])


def test_split_views_survive_a_saved_state(tmp_path: Path) -> None:
    """The views' byte offsets are part of the state: code regenerated from it is identical."""
    import os
    import subprocess
    import sys

    from deeploy_core.allocation import FirstFitAllocator
    from deeploy_core.compilation import CompileSettings
    from deeploy_core.network import NetworkDeployer
    from deeploy_core.network.state import import_state
    from deeploy_generic_c.platform import generic_c_platform

    model = split_network(tmp_path / "split.onnx")
    out = tmp_path / "out"
    env = {**os.environ, "DEEPLOY_CORE_PLUGINS": "generic-c"}
    result = subprocess.run([sys.executable, "-m", "deeploy_core", "compile", str(model), "-o", str(out), "--dump-state"],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
    fresh = NetworkDeployer(generic_c_platform(), CompileSettings(network_name="split"))
    compilation = fresh.compilation
    compilation.allocator, compilation.allocator_name, compilation.model = FirstFitAllocator(), "first-fit", str(model)
    assert import_state(compilation, out / "state" / "4-bind") == "bind"
    regenerated = fresh.generate()
    for name, text in regenerated.files.items():
        assert (out / name).read_text() == text, name
