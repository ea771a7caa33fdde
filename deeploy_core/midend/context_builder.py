"""Building the network context from the lowered graph."""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.ir import BufferKind, NetworkContext
from deeploy_core.ir.dtypes import UnsupportedTypeError, from_numpy


def _dtype_of(tensor: gs.Tensor, where: str):
    if tensor.dtype is None:
        raise ModelImportError(f"{where}: tensor {tensor.name!r} has no element type")
    try:
        return from_numpy(np.dtype(tensor.dtype))
    except (TypeError, UnsupportedTypeError) as error:
        raise ModelImportError(f"{where}: tensor {tensor.name!r}: {error}") from error


def _shape_of(tensor: gs.Tensor, where: str) -> tuple[int, ...]:
    shape = tensor.shape
    if shape is None or any(not isinstance(dim, (int, np.integer)) or dim < 0 for dim in shape):
        raise ModelImportError(f"{where}: tensor {tensor.name!r} has no static shape ({shape})")
    return tuple(int(dim) for dim in shape)


def build_context(graph: gs.Graph, name_prefix: str = "dc") -> NetworkContext:
    """One buffer per tensor: inputs, constants, then node outputs in graph order (C names start ``name_prefix``)."""
    ctxt = NetworkContext(name_prefix)
    outputs = {tensor.name for tensor in graph.outputs}
    for tensor in graph.inputs:
        ctxt.add(tensor.name, _dtype_of(tensor, "graph input"), _shape_of(tensor, "graph input"), BufferKind.INPUT)
    for node in graph.nodes:
        where = f"node {node.name!r} ({node.op})"
        for tensor in node.inputs:
            if isinstance(tensor, gs.Constant) and tensor.name and tensor.name not in ctxt:
                values = np.ascontiguousarray(tensor.values)
                ctxt.add(tensor.name, _dtype_of(tensor, where), tuple(values.shape), BufferKind.CONSTANT, values=values)
        for tensor in node.outputs:
            if not tensor.name:
                continue
            kind = BufferKind.OUTPUT if tensor.name in outputs else BufferKind.ACTIVATION
            buffer = ctxt.add(tensor.name, _dtype_of(tensor, where), _shape_of(tensor, where), kind)
            buffer.producer = node.name
        for tensor in node.inputs:
            if tensor.name:
                ctxt[tensor.name].consumers.append(node.name)
    ctxt.graph_inputs = [tensor.name for tensor in graph.inputs]
    ctxt.graph_outputs = [tensor.name for tensor in graph.outputs]
    for tensor in graph.outputs:
        if tensor.name not in ctxt:
            raise ModelImportError(f"graph output {tensor.name!r} is not produced by any node")
    return ctxt
