"""``Shape`` and ``Size`` of statically shaped tensors replaced by their values, ``start``/``end`` honoured.

onnx-graphsurgeon's shape folding ignores ``Shape``'s ``start`` and ``end``
attributes (opset 15): ONNX's ``Attention`` body takes ``Shape(Q, start=-1)``
and got the whole shape, so the reshapes after it asked for impossible shapes.
Here each such node becomes a ``Constant`` computed from the inferred shape,
before any other folding sees it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import helper, numpy_helper

from deeploy_core.frontend.unknown_shapes import is_static, tensor_dims
from deeploy_core.lowering.static_shape_nodes import shape_node_dims, shape_slice
from deeploy_core.passes import Modifies, Pass


def fold_static_shape_values(model: onnx.ModelProto) -> int:
    """Replace (in place) every default-domain ``Shape``/``Size`` of a statically shaped input; returns how many."""
    known = tensor_dims(model.graph)
    folded = 0
    for node in model.graph.node:
        if node.op_type not in ("Shape", "Size") or node.domain not in ("", "ai.onnx") or not node.input:
            continue
        dims = known.get(node.input[0])
        if not is_static(dims):
            continue
        values = [int(dim) for dim in dims or []]
        if node.op_type == "Shape":
            value = np.array(shape_node_dims(node, values), dtype=np.int64)
        else:
            value = np.array(math.prod(values), dtype=np.int64)
        replacement = helper.make_node("Constant", [], [node.output[0]], name=node.name,
                                       value=numpy_helper.from_array(value, node.output[0]))
        node.CopyFrom(replacement)
        folded += 1
    return folded


class FoldStaticShapeValues(Pass[gs.Graph]):
    """The same on the lowering graph, before :class:`~deeploy_core.lowering.FoldConstants`; returns how many."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        folded = 0
        for node in list(graph.nodes):
            if node.op not in ("Shape", "Size") or (node.domain or "") not in ("", "ai.onnx") or not node.inputs:
                continue
            shape = node.inputs[0].shape
            if shape is None or not all(isinstance(dim, int) and dim >= 0 for dim in shape):
                continue
            dims = [int(dim) for dim in shape]
            if node.op == "Shape":
                end = node.attrs.get("end")
                value = np.array(shape_slice(dims, int(node.attrs.get("start", 0)), None if end is None else int(end)),
                                 dtype=np.int64)
            else:
                value = np.array(math.prod(dims), dtype=np.int64)
            output = node.outputs[0]
            if any(tensor is output for tensor in graph.outputs):
                continue  # a graph output keeps its node (the interface names it)
            constant = gs.Constant(output.name, value)
            for consumer in list(output.outputs):
                for index, tensor in enumerate(list(consumer.inputs)):
                    if tensor is output:
                        consumer.inputs[index] = constant
            node.outputs.clear()  # the node goes at clean-up; no variable shares the constant's name meanwhile
            folded += 1
        if folded:
            graph.cleanup(remove_unused_graph_inputs=False)
        return folded or None
