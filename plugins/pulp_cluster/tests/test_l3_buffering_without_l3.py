"""``l3_buffering`` with a ``--memory-hierarchy`` file that has no L3: the default is accepted, double is refused."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from deeploy_core.api import CompileOptions, compile_model
from deeploy_core.errors import DeeployError
from deeploy_core.plugins import PluginHost

HIERARCHY = """levels:
  - {name: L2, neighbours: [L1], size: 524288}
  - {name: L1, neighbours: [L2], size: 32000}
default: L2
compute: L1
"""


def test_a_hierarchy_without_l3_takes_the_default_and_refuses_double(cluster_host: PluginHost, tmp_path: Path) -> None:
    model = tmp_path / "relu.onnx"
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    (tmp_path / "levels.yaml").write_text(HIERARCHY, encoding="utf-8")
    options = CompileOptions(platform="pulp-cluster", memory_hierarchy=str(tmp_path / "levels.yaml"))
    _, generated = compile_model(model, options, cluster_host)
    assert set(generated.report["level_peaks"]) == {"L1", "L2"} and generated.report["traffic"]["L2->L1"] > 0
    with pytest.raises(DeeployError, match=r"^l3_buffering: the memory hierarchy has no level L3 \(its levels: L2, L1\)"):
        compile_model(model, CompileOptions(platform="pulp-cluster", memory_hierarchy=str(tmp_path / "levels.yaml"),
                                            options={"l3_buffering": "double"}), cluster_host)
