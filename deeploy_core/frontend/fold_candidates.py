"""Whether a round of onnx-graphsurgeon's constant folding could change a graph at all, without running it.

Shape folding (:mod:`.shape_folding`) repeats inference and folding until a
round folds nothing, so its last round always finds nothing: on a
TorchScript export of a few hundred nodes that round alone (import into
onnx-graphsurgeon, a graph copy, its passes, export) took a third of a
second.  :func:`may_fold` reads the ONNX graph once and answers no only
when none of ``fold_constants``' passes has anything to work on:

- every ``Constant`` node is lowered to a tensor (whatever else is excluded);
- a node whose inputs are all initializers is evaluated, unless it is an op
  that folding keeps (the caller's list) or of another domain;
- ``Shape`` of a tensor whose rank is known is folded (and ``Gather`` or
  ``Slice`` of it) when its dimensions are;
- a ``Cast`` to float feeding arithmetic is elided (shape-tensor cast
  elision);
- a node with a subgraph may fold inside it or be flattened.

Each test is wider than what onnx-graphsurgeon actually does, so a yes may
still fold nothing (the round then runs, as before); a no is certain.
It only holds for a graph that has been through a round already: that
round's clean-up removed the dead nodes a first round would remove.
"""

from __future__ import annotations

from collections.abc import Collection

import onnx
from onnx import TensorProto

from deeploy_core.frontend.unknown_shapes import Dims, tensor_dims

_CAST_ELISION_OPS = frozenset({"Add", "Sub", "Mul", "Div", "Max", "Min", "Equal", "Greater", "Less", "Concat"})
"""The ops onnx-graphsurgeon looks through when it removes a Cast to float and back (its shape-tensor cast elision)."""

_DEFAULT_DOMAINS = ("", "ai.onnx")


def may_fold(graph: onnx.GraphProto, kept_ops: Collection[str], dims: dict[str, Dims | None] | None = None) -> bool:
    """Some node of an already folded and inferred ``graph`` may still fold (see the module docstring); ``dims``: the
    graph's :func:`tensor_dims` when the caller has them."""
    constants = {tensor.name for tensor in graph.initializer}
    dims = tensor_dims(graph) if dims is None else dims
    float_casts = {node.output[0] for node in graph.node
                   if node.op_type == "Cast" and node.output and _cast_target(node) == TensorProto.FLOAT}
    for node in graph.node:
        if node.op_type == "Constant" or _has_subgraph(node):
            return True
        inputs = [name for name in node.input if name]
        if (all(name in constants for name in inputs) and node.op_type not in kept_ops
                and node.domain in _DEFAULT_DOMAINS):
            return True
        if node.op_type == "Shape" and inputs and dims.get(inputs[0]) is not None:
            return True
        if node.op_type in _CAST_ELISION_OPS and any(name in float_casts for name in inputs):
            return True
    return False


def _cast_target(node: onnx.NodeProto) -> int | None:
    return next((attribute.i for attribute in node.attribute if attribute.name == "to"), None)


def _has_subgraph(node: onnx.NodeProto) -> bool:
    return any(attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for attribute in node.attribute)
