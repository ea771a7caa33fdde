"""``Shape`` and ``Size`` of statically shaped tensors replaced by their values, ``start``/``end`` honoured.

onnx-graphsurgeon's shape folding ignores ``Shape``'s ``start`` and ``end``
attributes (opset 15): ONNX's ``Attention`` body takes ``Shape(Q, start=-1)``
and got the whole shape, so the reshapes after it asked for impossible shapes.
Here each such node becomes a ``Constant`` computed from the inferred shape,
before any other folding sees it.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import helper, numpy_helper

from deeploy_core.frontend.unknown_shapes import is_static, tensor_dims


def _shape_slice(node: onnx.NodeProto, dims: list[int]) -> list[int]:
    rank = len(dims)
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
    start, end = int(attributes.get("start", 0)), int(attributes.get("end", rank))
    start = min(max(start + rank if start < 0 else start, 0), rank)
    end = min(max(end + rank if end < 0 else end, 0), rank)
    return dims[start:end]


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
            value = np.array(_shape_slice(node, values), dtype=np.int64)
        else:
            value = np.array(math.prod(values), dtype=np.int64)
        replacement = helper.make_node("Constant", [], [node.output[0]], name=node.name,
                                       value=numpy_helper.from_array(value, node.output[0]))
        node.CopyFrom(replacement)
        folded += 1
    return folded
