"""Small onnx-graphsurgeon helpers the quantisation lowerings share: constants, fresh names, new nodes.

Rewrites that replace one node by a few must invent tensor names that clash
with nothing in the graph (the C code names buffers after them) and must keep
the replaced node's output tensor, so that its consumers and a graph output of
that name stay connected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

DEFAULT_DOMAINS = (None, "", "ai.onnx")


def constant_value(tensor: gs.Tensor) -> np.ndarray | None:
    """The value of a constant input (an initializer or a ``Constant`` node's output); None for a variable."""
    if isinstance(tensor, gs.Constant):
        return np.asarray(tensor.values)
    if len(tensor.inputs) == 1 and tensor.inputs[0].op == "Constant":
        value = tensor.inputs[0].attrs.get("value")
        if isinstance(value, gs.Constant):
            return np.asarray(value.values)
    return None


def is_op(node: gs.Node, op: str, domain: str | None = None) -> bool:
    """``node`` is ``op`` in ``domain`` (None: the default domain, however it is spelled)."""
    if node.op != op:
        return False
    return node.domain in DEFAULT_DOMAINS if domain is None else node.domain == domain


def only_consumer(tensor: gs.Tensor) -> gs.Node | None:
    """The single node reading ``tensor`` (None when there are none or several)."""
    return tensor.outputs[0] if len(tensor.outputs) == 1 else None


class Namer:
    """Fresh tensor and node names derived from a stem, unique in the graph."""

    def __init__(self, graph: gs.Graph) -> None:
        self._taken = set(graph.tensors().keys()) | {node.name for node in graph.nodes if node.name}

    def __call__(self, stem: str) -> str:
        name, counter = stem, 1
        while name in self._taken:
            counter += 1
            name = f"{stem}_{counter}"
        self._taken.add(name)
        return name


def new_constant(namer: Namer, stem: str, values: np.ndarray) -> gs.Constant:
    return gs.Constant(namer(stem), np.ascontiguousarray(values))


def new_node(graph: gs.Graph, namer: Namer, op: str, stem: str, inputs: Sequence[gs.Tensor],
             outputs: Sequence[gs.Tensor], attrs: dict[str, Any] | None = None) -> gs.Node:
    """Append a default-domain node to ``graph``."""
    node = gs.Node(op=op, name=namer(stem), attrs=dict(attrs or {}), inputs=list(inputs), outputs=list(outputs))
    graph.nodes.append(node)
    return node


def detach(node: gs.Node) -> None:
    """Disconnect ``node`` so that ``cleanup`` removes it (its outputs stay for their new producers)."""
    node.inputs.clear()
    node.outputs.clear()


def quantisation_axis(shapes: Sequence[tuple[int, ...]], data_shape: tuple[int, ...]) -> tuple[bool, int | None]:
    """How broadcast scale/zero-point arrays vary over ``data_shape``: (representable, axis or None).

    ``DequantizeLinear`` takes one scale per tensor or one per index along one
    axis; QONNX broadcasts them numpy-style (``(8, 1, 1, 1)`` against a weight
    ``(8, 1, 3, 3)``).  Returns ``(True, None)`` for per-tensor, ``(True, a)``
    for per-axis ``a``, ``(False, None)`` when they vary along several axes.
    """
    try:
        combined = np.broadcast_shapes(*shapes)
    except ValueError:
        return False, None
    if len(combined) > len(data_shape):
        return False, None
    padded = (1,) * (len(data_shape) - len(combined)) + tuple(combined)
    varying = [axis for axis, size in enumerate(padded) if size != 1]
    if not varying:
        return True, None
    if len(varying) == 1 and padded[varying[0]] == data_shape[varying[0]]:
        return True, varying[0]
    return False, None


def along_axis(values: np.ndarray, data_rank: int, axis: int | None) -> np.ndarray:
    """A broadcast parameter as ``DequantizeLinear`` wants it: a scalar, or a vector along ``axis``."""
    array = np.asarray(values)
    if axis is None:
        return array.reshape(-1)[0].reshape(())
    padded = array.reshape((1,) * (data_rank - array.ndim) + array.shape)
    return np.moveaxis(padded, axis, 0).reshape(padded.shape[axis], -1)[:, 0].copy()


def broadcast_along(values: np.ndarray, length: int) -> np.ndarray:
    """A scalar or vector parameter repeated to ``length`` entries (zero point beside a per-axis scale)."""
    array = np.asarray(values).reshape(-1)
    return np.broadcast_to(array, (length,)).copy() if array.size == 1 else array
