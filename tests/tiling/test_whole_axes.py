"""Where the tiler may not cut an output axis, report.json and the diagnosis say which axis and why (issue 32)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.plugins import PluginHost
from deeploy_core.tiling.errors import TilingInfeasibleError
from deeploy_pulp_cluster import plugin as pulp_cluster_plugin


@pytest.fixture(scope="module")
def cluster_host() -> PluginHost:
    host = PluginHost()
    host.add_plugin(pulp_cluster_plugin, name="pulp-cluster", distribution="deeploy-pulp-cluster")
    return host


def single_node(tmp_path: Path, node: onnx.NodeProto, x_shape: list[int], y_shape: list[int],
                initializers: tuple[onnx.TensorProto, ...] = ()) -> Path:
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], list(initializers))
    path = tmp_path / f"{node.op_type}.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def grouped_conv(tmp_path: Path) -> Path:
    weights = numpy_helper.from_array(np.ones((8, 2, 3, 3), np.float32), "w")
    return single_node(tmp_path, helper.make_node("Conv", ["x", "w"], ["y"], group=2, pads=[1, 1, 1, 1]),
                       [1, 4, 8, 8], [1, 8, 8, 8], (weights,))


CASES = {
    "Softmax": (lambda p: single_node(p, helper.make_node("Softmax", ["x"], ["y"], axis=-1), [1, 4, 64], [1, 4, 64]),
                {"2": "the softmax normalises along it: every tile needs the whole axis"}),
    "ReduceMean": (lambda p: single_node(p, helper.make_node("ReduceMean", ["x"], ["y"], axes=[2], keepdims=1),
                                         [1, 4, 64], [1, 4, 1]), {}),  # the reduced output axis has length 1
    "Conv": (grouped_conv,
             {"1": "a grouped convolution's output channels are kept whole: each group reads its own input channels"}),
}


@pytest.mark.parametrize("op", sorted(CASES))
def test_the_report_names_each_axis_kept_whole_and_why(op: str, cluster_host: PluginHost, tmp_path: Path) -> None:
    build, expected = CASES[op]
    _, generated = compile_model(build(tmp_path), CompileOptions(platform="pulp-cluster"), cluster_host)
    (layer,) = generated.report["tiling"]["layers"]
    assert layer["whole_axes"] == expected


def test_the_diagnosis_names_the_axis_that_cannot_be_cut(cluster_host: PluginHost, tmp_path: Path) -> None:
    model = CASES["Softmax"][0](tmp_path)
    with pytest.raises(TilingInfeasibleError) as raised:
        compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L1": 64}), cluster_host)
    assert str(raised.value).endswith("(the part of tensor 'x' that every tile needs is the largest; output axis 2 "
                                      "stays whole: the softmax normalises along it: every tile needs the whole axis)")
    # and the size it names is enough: two 64-float rows (input and output) and the table
    compile_model(model, CompileOptions(platform="pulp-cluster", level_sizes={"L1": raised.value.needed_bytes}),
                  cluster_host)
