"""``FoldStaticShapeValues`` replaces Shape/Size of static tensors by constants without confusing onnx-graphsurgeon.

The pass used to leave the ``Shape`` node's output variable alive beside the
constant of the same name until clean-up, and onnx-graphsurgeon printed a
dozen lines of "Found distinct tensors that share the same name" to the
user's terminal for every such node of a TorchScript SegFormer.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs
import pytest
from onnx_graphsurgeon.logger import G_LOGGER

from deeploy_core.lowering.static_shape_values import FoldStaticShapeValues


def _graph() -> gs.Graph:
    x = gs.Variable("x", np.float32, [1, 2, 3, 4])
    shape = gs.Variable("shape", np.int64, [2])
    size = gs.Variable("size", np.int64, [])
    reshaped = gs.Variable("y", np.float32, None)
    exported_shape = gs.Variable("exported_shape", np.int64, [4])
    nodes = [gs.Node("Shape", inputs=[x], outputs=[shape], attrs={"start": -2}),
             gs.Node("Size", inputs=[x], outputs=[size]),
             gs.Node("Reshape", inputs=[x, shape], outputs=[reshaped]),
             gs.Node("Shape", inputs=[x], outputs=[exported_shape])]
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[reshaped, size, exported_shape])


def test_shape_and_size_become_constants_and_graphsurgeon_stays_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(G_LOGGER, "warning", lambda message, *args, **kwargs: warnings.append(str(message)))
    graph = _graph()
    assert FoldStaticShapeValues().apply_pass(graph, {}) == 1, "Shape folds; Size and the last Shape are outputs"
    assert warnings == []
    reshape = next(node for node in graph.nodes if node.op == "Reshape")
    assert isinstance(reshape.inputs[1], gs.Constant)
    np.testing.assert_array_equal(reshape.inputs[1].values, [3, 4])  # start=-2 of [1, 2, 3, 4]
    assert sorted(node.op for node in graph.nodes) == ["Reshape", "Shape", "Size"], "graph outputs keep their nodes"
