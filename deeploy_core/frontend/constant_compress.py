"""``Compress`` with a constant condition, rewritten as the ``Gather`` it is, so its output gets a static shape.

ONNX's shape inference never reads Compress's condition, so the length of
the compressed axis stays unknown (``unk__0``) even when the condition is a
weight, and the static-shape check refused every tensor from there on.  With
the condition known, ``Compress(x, c, axis=a)`` is ``Gather(x, nonzero(c), axis=a)``
(entries of ``c`` beyond the axis' length select nothing, as ONNX defines),
and without ``axis`` it is the same on ``x`` flattened.  Inference shapes a
Gather of constant indices exactly.  Only models whose shapes inference
left open get here (see :mod:`.shape_folding`): a Compress whose output
shape is already declared keeps its own kernel.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _constants(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Initializers and ``Constant`` node values (the forms a constant condition takes before folding)."""
    values = {tensor.name: numpy_helper.to_array(tensor) for tensor in graph.initializer}
    for node in graph.node:
        if node.op_type == "Constant" and node.domain in _DEFAULT_DOMAINS and len(node.output) == 1:
            value = next((attribute.t for attribute in node.attribute if attribute.name == "value"), None)
            if value is not None:
                values[node.output[0]] = numpy_helper.to_array(value)
    return values


def _static_dims(graph: onnx.GraphProto, name: str) -> list[int] | None:
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.name == name and value.type.tensor_type.HasField("shape"):
            dims = value.type.tensor_type.shape.dim
            if all(dim.HasField("dim_value") for dim in dims):
                return [int(dim.dim_value) for dim in dims]
    return None


def compress_to_gather(model: onnx.ModelProto, inferred: onnx.GraphProto) -> int:
    """Rewrite (in ``model``) every Compress whose condition is constant; ``inferred`` gives input shapes.

    Returns how many were rewritten.  A Compress whose data input has no
    static shape yet waits for a later fold round.
    """
    graph = model.graph
    if not any(node.op_type == "Compress" for node in graph.node):
        return 0  # the common case, before reading every constant of the model
    constants = _constants(graph)
    taken = {name for node in graph.node for name in (*node.input, *node.output)} | set(constants)
    rewritten = 0
    for node in list(graph.node):
        if node.op_type != "Compress" or node.domain not in _DEFAULT_DOMAINS or len(node.input) != 2:
            continue
        condition = constants.get(node.input[1])
        dims = _static_dims(inferred, node.input[0])
        if condition is None or condition.ndim != 1 or dims is None:
            continue
        axis_attribute = next((attribute for attribute in node.attribute if attribute.name == "axis"), None)
        data, extra = node.input[0], []
        if axis_attribute is None:
            length, axis = int(np.prod(dims)), 0
            flat_shape = _fresh(f"{node.name or node.output[0]}/flat_shape", taken)
            data = _fresh(f"{node.name or node.output[0]}/flat", taken)
            graph.initializer.append(numpy_helper.from_array(np.array([-1], dtype=np.int64), flat_shape))
            extra.append(helper.make_node("Reshape", [node.input[0], flat_shape], [data], name=data))
        else:
            axis = int(axis_attribute.i) % max(len(dims), 1)
            length = dims[axis]
        indices = np.flatnonzero(condition.astype(bool)[:length]).astype(np.int64)
        indices_name = _fresh(f"{node.name or node.output[0]}/selected", taken)
        graph.initializer.append(numpy_helper.from_array(indices, indices_name))
        gather = helper.make_node("Gather", [data, indices_name], list(node.output), name=node.name, axis=axis)
        index = list(graph.node).index(node)
        del graph.node[index]
        for offset, new_node in enumerate([*extra, gather]):
            graph.node.insert(index + offset, new_node)
        rewritten += 1
    return rewritten


def _fresh(name: str, taken: set[str]) -> str:
    candidate, suffix = name, 1
    while candidate in taken:
        candidate, suffix = f"{name}_{suffix}", suffix + 1
    taken.add(candidate)
    return candidate
