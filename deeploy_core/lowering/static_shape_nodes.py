"""``Shape`` of a statically shaped tensor, folded with its ``start``/``end`` attributes honoured.

onnx-graphsurgeon's shape folding (``fold_shapes=True``) replaces ``Shape``
by the input's whole shape and ignores the opset-15 ``start`` and ``end``
attributes, so ``Shape(x, start=1)`` of a 3-D ``x`` folded to three
dimensions instead of two (ONNX's ``test_shape_start_1`` and its kin).
Folding those nodes here first, as ONNX defines the slice (negative bounds
count from the rank, out-of-range bounds are clamped), leaves it nothing to
get wrong.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import onnx
import onnx_graphsurgeon as gs

Dim = TypeVar("Dim")
"""A dimension: a number, or (for partly known shapes) whatever stands for an unknown one."""


def shape_slice(dims: list[Dim], start: int = 0, end: int | None = None) -> list[Dim]:
    """The dimensions ``Shape`` returns for ``dims`` with its ``start``/``end`` attributes (unknown ones too)."""
    rank = len(dims)

    def clamp(bound: int) -> int:
        return min(max(bound + rank if bound < 0 else bound, 0), rank)

    return dims[clamp(start):clamp(rank if end is None else end)]


def shape_node_dims(node: onnx.NodeProto, dims: list[Dim]) -> list[Dim]:
    """What the ``Shape`` node ``node`` (an ONNX protobuf) returns for an input of dimensions ``dims``."""
    attributes = {attribute.name: attribute.i for attribute in node.attribute if attribute.name in ("start", "end")}
    return shape_slice(dims, attributes.get("start", 0), attributes.get("end"))


def fold_static_shape_nodes(graph: gs.Graph) -> int:
    """Turn the output of every ``Shape`` of a fully static tensor into a constant; returns how many were folded."""
    folded = 0
    for node in graph.nodes:
        if node.op != "Shape" or node.domain not in (None, "", "ai.onnx") or len(node.outputs) != 1:
            continue
        source, result = node.inputs[0], node.outputs[0]
        if not isinstance(result, gs.Variable) or source.shape is None:
            continue
        if not all(isinstance(dim, (int, np.integer)) and dim >= 0 for dim in source.shape):
            continue
        dims = shape_slice([int(dim) for dim in source.shape], int(node.attrs.get("start", 0)),
                           None if node.attrs.get("end") is None else int(node.attrs["end"]))
        result.to_constant(np.array(dims, dtype=np.int64))
        node.outputs.clear()
        folded += 1
    return folded
