"""Tensors the generated C can hold: a supported element type, no empty dimension, a sane size.

These checks run on declared and inferred shapes only; nothing is allocated,
so a model that claims a 2^60-element tensor is refused in microseconds rather
than exhausting the host's memory in constant folding.
"""

from __future__ import annotations

import math

import onnx
from onnx import TensorProto, helper

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.node_label import node_label
from deeploy_core.ir.empty_outputs import EMPTY_RESULT_OPS
from deeploy_core.ir.dtypes import UnsupportedTypeError, from_onnx

MAX_TENSOR_BYTES = 1 << 31
"""The largest tensor accepted (2 GiB): beyond it, 32-bit offsets of the targets overflow."""


def _type_name(elem_type: int) -> str:
    if elem_type in TensorProto.DataType.values():
        return TensorProto.DataType.Name(elem_type)
    return f"#{elem_type}"


def _byte_size(elem_type: int, dims: list[int]) -> int:
    itemsize = helper.tensor_dtype_to_np_dtype(elem_type).itemsize if elem_type != TensorProto.STRING else 1
    return math.prod(dims) * itemsize


def _tensor_owner(graph: onnx.GraphProto) -> dict[str, str]:
    """Who a tensor belongs to in messages: ``node 'c' (Conv): output 'y'`` or ``node 'c' (Conv): input 'x'``."""
    owners: dict[str, str] = {}
    for index, node in enumerate(graph.node):
        for name in node.output:
            owners.setdefault(name, f"{node_label(node, index)}: output {name!r}")
    for index, node in enumerate(graph.node):
        for name in node.input:
            owners.setdefault(name, f"{node_label(node, index)}: input {name!r}")
    return owners


def check_initializer_sizes(graph: onnx.GraphProto) -> None:
    """Initializers may not claim more than :data:`MAX_TENSOR_BYTES` (checked before anything reads them)."""
    for tensor in graph.initializer:
        if any(dim < 0 for dim in tensor.dims):
            raise ModelImportError(f"initializer {tensor.name!r} has a negative dimension {list(tensor.dims)}")
        if tensor.data_type == TensorProto.UNDEFINED:
            raise ModelImportError(f"initializer {tensor.name!r} has no element type")
        size = math.prod(tensor.dims) * 16  # the widest element type: a cheap bound before the exact one
        if size > MAX_TENSOR_BYTES and _byte_size(tensor.data_type, list(tensor.dims)) > MAX_TENSOR_BYTES:
            raise ModelImportError(
                f"initializer {tensor.name!r} declares shape {list(tensor.dims)} "
                f"({_byte_size(tensor.data_type, list(tensor.dims))} bytes), more than the {MAX_TENSOR_BYTES} bytes "
                "a tensor may have"
            )
        if tensor.HasField("raw_data") and tensor.data_type != TensorProto.STRING:
            needed = _byte_size(tensor.data_type, list(tensor.dims))
            if len(tensor.raw_data) != needed:
                raise ModelImportError(
                    f"initializer {tensor.name!r} holds {len(tensor.raw_data)} bytes; its shape {list(tensor.dims)} "
                    f"of {_type_name(tensor.data_type)} needs {needed}"
                )


def _declared(graph: onnx.GraphProto) -> list[tuple[str, int, list[int] | None]]:
    """(name, element type, known dims or None) of every typed tensor the model declares or inference derived."""
    found: dict[str, tuple[str, int, list[int] | None]] = {}
    for tensor in graph.initializer:
        found[tensor.name] = (tensor.name, tensor.data_type, list(tensor.dims))
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.name in found or value.type.WhichOneof("value") != "tensor_type":
            continue
        tensor_type = value.type.tensor_type
        dims = None
        if tensor_type.HasField("shape") and all(dim.HasField("dim_value") for dim in tensor_type.shape.dim):
            dims = [dim.dim_value for dim in tensor_type.shape.dim]
        found[value.name] = (value.name, tensor_type.elem_type, dims)
    return list(found.values())


def check_tensors(model: onnx.ModelProto) -> None:
    """Every tensor: supported element type, at most :data:`MAX_TENSOR_BYTES`; no empty activation.

    An activation with a zero dimension (a kernel larger than its padded input)
    is refused: on a microcontroller it is a model bug, and C has no
    zero-length arrays.  Only an unread graph output of an op whose result
    may be empty (a slice past the end) is admitted; lowering makes it a constant.
    """
    graph = model.graph
    owners = _tensor_owner(graph)
    constants = {tensor.name for tensor in graph.initializer}
    empty_results = _admissible_empty_outputs(graph)
    for name, elem_type, dims in _declared(graph):
        where = owners.get(name, f"tensor {name!r}")
        try:
            from_onnx(elem_type)
        except UnsupportedTypeError:
            raise ModelImportError(f"{where} has element type {_type_name(elem_type)}, which is not supported") from None
        if dims is None:
            continue
        if 0 in dims and name not in constants and name not in empty_results:  # an empty constant is a parameter
            raise ModelImportError(f"{where} has shape {dims}: empty tensors are not supported")
        size = _byte_size(elem_type, dims)
        if size > MAX_TENSOR_BYTES:
            raise ModelImportError(
                f"{where} has shape {dims} ({size} bytes), more than the {MAX_TENSOR_BYTES} bytes a tensor may have"
            )


def _admissible_empty_outputs(graph: onnx.GraphProto) -> set[str]:
    """Graph outputs read by no node, each the only output of an op whose result may be empty
    (:mod:`deeploy_core.ir.empty_outputs`); they may be empty."""
    read = {name for node in graph.node for name in node.input}
    outputs = {value.name for value in graph.output} - read
    return {node.output[0] for node in graph.node
            if node.op_type in EMPTY_RESULT_OPS and node.domain in ("", "ai.onnx") and len(node.output) == 1
            and node.output[0] in outputs}
