"""The opset < 13 meaning of ``Softmax``, ``LogSoftmax`` and ``Hardmax`` made explicit.

Before opset 13 these operators coerce their input to 2-D at ``axis`` (every
axis from ``axis`` on is one row) and normalise over the whole row; from
opset 13 they normalise over the single axis ``axis``.  The version converter
only relabels the nodes, which changes the result whenever ``axis`` is not the
last axis.  Before conversion each such node becomes
``Flatten(axis) → op(axis=1) → Reshape(Shape(input))``, whose meaning is the
same under both definitions (on a 2-D input axis 1 is the last axis).
"""

from __future__ import annotations

import onnx
from onnx import helper, shape_inference

_COERCING_OPS = frozenset({"Softmax", "LogSoftmax", "Hardmax"})
_FIRST_PER_AXIS_OPSET = 13


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    """Known ranks of the graph's tensors (lenient inference: an unknown rank just means rewrite)."""
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference problems are reported later by the strict pass
        inferred = model
    ranks = {tensor.name: len(tensor.dims) for tensor in inferred.graph.initializer}
    for value in [*inferred.graph.input, *inferred.graph.value_info, *inferred.graph.output]:
        tensor_type = value.type.tensor_type
        if tensor_type.HasField("shape"):
            ranks[value.name] = len(tensor_type.shape.dim)
    return ranks


def _axis(node: onnx.NodeProto) -> int:
    for attribute in node.attribute:
        if attribute.name == "axis":
            return int(helper.get_attribute_value(attribute))
    return 1


def uncoerce_softmax_axes(model: onnx.ModelProto, source_opset: int) -> int:
    """Rewrite old-style nodes whose ``axis`` is not the last; returns how many were rewritten."""
    if source_opset >= _FIRST_PER_AXIS_OPSET:
        return 0
    def coerces(node: onnx.NodeProto) -> bool:
        return node.op_type in _COERCING_OPS and node.domain in ("", "ai.onnx")

    if not any(coerces(node) for node in model.graph.node):
        return 0
    ranks = _ranks(model)
    rewritten = 0
    nodes: list[onnx.NodeProto] = []
    for node in model.graph.node:
        if not coerces(node):
            nodes.append(node)
            continue
        axis, rank = _axis(node), ranks.get(node.input[0])
        if rank is not None and axis in (-1, rank - 1):
            nodes.append(node)
            continue
        source, result = node.input[0], node.output[0]
        flat, rows, shape = f"{result}__coerced_2d", f"{result}__rows", f"{result}__shape"
        name = node.name or result
        nodes.extend([
            helper.make_node("Flatten", [source], [flat], name=f"{name}__flatten", axis=axis),
            helper.make_node(node.op_type, [flat], [rows], name=name, axis=1),
            helper.make_node("Shape", [source], [shape], name=f"{name}__shape"),
            helper.make_node("Reshape", [rows, shape], [result], name=f"{name}__reshape"),
        ])
        rewritten += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return rewritten
