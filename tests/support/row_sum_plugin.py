"""An operator plugin for an op without an ONNX schema, ``com.example::RowSum``, with its test network and reference.

The plugin claims RowSum on one platform, with its shape declaration (a :class:`CustomOpSchema`) or without it,
and maps it to the C kernel in ``tests/custom_op_kernels``.  ``tests/test_frontend_custom_ops.py`` compiles and runs
it, ``tests/test_supported_ops_model.py`` asks ``supported-ops --model`` about it; it lives here so that neither test
module imports the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import TensorProto, helper

from deeploy_core.extensions import OperatorExtension
from deeploy_core.frontend.custom_ops import CustomOpSchema, Shape
from deeploy_core.hookspecs import hookimpl
from deeploy_core.ir import NetworkContext
from deeploy_core.ir.dtypes import FLOAT32
from deeploy_core.mapping import (
    NodeBinding,
    NodeMapper,
    NodeParser,
    NodeTemplate,
    NodeTypeChecker,
    OperatorRepresentation,
)

KERNELS = Path(__file__).resolve().parents[1] / "custom_op_kernels"
"""``row_sum.c`` and ``row_sum.h``."""


def row_sum_shapes(shapes: Sequence[Shape | None], attributes: Mapping[str, Any]) -> Sequence[Shape]:
    """RowSum keeps every axis but the last, which it sums to one element."""
    shape = shapes[0]
    if shape is None or len(shape) < 1:
        raise ValueError("RowSum needs an input of rank 1 or more")
    return [(*shape[:-1], 1)]


ROW_SUM = CustomOpSchema("RowSum", "com.example", shapes=row_sum_shapes)


class RowSumParser(NodeParser):
    """One float tensor in, its rows summed out."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        cols = int(node.inputs[0].shape[-1])
        return {"X": x.c_name, "Y": y.c_name, "rows": x.numel // cols, "cols": cols}


def row_sum_mapper() -> NodeMapper:
    template = NodeTemplate("dct_row_sum_f32(${X}, ${Y}, ${rows}, ${cols});", headers=("row_sum.h",))
    return NodeMapper(RowSumParser(), (NodeBinding(NodeTypeChecker((FLOAT32,), (FLOAT32,)), template),),
                      name="RowSum float32 (test plugin)")


class RowSumPlugin:
    """Registers com.example::RowSum on ``platform``, with its declaration (or without, to test the refusal)."""

    def __init__(self, platform: str, declared: bool = True) -> None:
        self.platform = platform
        self.declared = declared

    @hookimpl
    def register_operators(self, register: Any) -> None:
        register(OperatorExtension(
            name=f"{self.platform}.row-sum", platform=self.platform, op_type="RowSum", domain="com.example",
            factory=row_sum_mapper, sources=(KERNELS / "row_sum.c",), include_dirs=(KERNELS,),
            schema=ROW_SUM if self.declared else None, description="RowSum (test plugin)"))


def row_sum_network(path: Path) -> Path:
    """x → Relu → RowSum → RowSum → Sub(relu, sum) → Mul: the Sub broadcasts the declared [4, 3, 1]."""
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu"),
             helper.make_node("RowSum", ["r"], ["s"], name="sum1", domain="com.example"),
             helper.make_node("RowSum", ["s"], ["s2"], name="sum2", domain="com.example"),
             helper.make_node("Sub", ["r", "s2"], ["d"], name="sub"),
             helper.make_node("Mul", ["d", "x"], ["y"], name="mul")]
    graph = helper.make_graph(nodes, "row_sum", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3, 6])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.example", 1)])
    onnx.save(model, path)
    return path


def row_sum_reference(x: np.ndarray) -> np.ndarray:
    """The network in numpy, rows summed left to right in float32 like the kernel."""
    r = np.maximum(x, np.float32(0))
    s = np.zeros(r.shape[:-1] + (1,), np.float32)
    for column in range(r.shape[-1]):
        s[..., 0] += r[..., column]
    return ((r - s) * x).astype(np.float32)
