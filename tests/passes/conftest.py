"""Small real graphs for the pass-infrastructure tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
import onnx_graphsurgeon as gs
import pytest
from onnx import TensorProto, helper


def build_chain(ops: Sequence[str]) -> gs.Graph:
    """x -> ops[0] -> ops[1] -> ... -> y, nodes named n0, n1, ..."""
    x = gs.Variable("x", dtype=np.float32, shape=(1, 4))
    tensors = [x]
    nodes = []
    for i, op in enumerate(ops):
        out = gs.Variable(f"t{i}", dtype=np.float32, shape=(1, 4))
        nodes.append(gs.Node(op=op, name=f"n{i}", inputs=[tensors[-1]], outputs=[out]))
        tensors.append(out)
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[tensors[-1]])


@pytest.fixture
def chain_graph() -> Callable[[Sequence[str]], gs.Graph]:
    return build_chain


@pytest.fixture
def conv_relu_graph() -> gs.Graph:
    """A Conv -> Relu -> Add graph imported from a real ONNX model."""
    weight = helper.make_tensor(
        "w", TensorProto.FLOAT, [2, 1, 1, 1], np.ones(2, dtype=np.float32).tolist()
    )
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Add", ["r", "r"], ["y"], name="add"),
    ]
    model = helper.make_model(
        helper.make_graph(
            nodes,
            "conv_relu",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])],
            initializer=[weight],
        )
    )
    onnx.checker.check_model(model)
    return gs.import_onnx(model)
