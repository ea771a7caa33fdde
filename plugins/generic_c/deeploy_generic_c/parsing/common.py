"""Helpers shared by the op tables: C literals for shapes, broadcasting, common checkers."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Iterable

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, TileConstraint, dtypes,
)

HEADERS = ("dcg_kernels.h",)


def one_output_of(element_type: int) -> Callable[[Sequence[int | None], Mapping[str, Any]], Sequence[int]]:
    """A CustomOpSchema type rule for an op whose single output has one element type (an ONNX TensorProto
    code) whatever its inputs are, e.g. Dequant (float32) and Quant (int8)."""

    def rule(types: Sequence[int | None], attributes: Mapping[str, Any]) -> Sequence[int]:
        return [element_type]

    return rule

MAX_DIMS = 8

FLOAT_UNARY = NodeTypeChecker((dtypes.FLOAT32,), (dtypes.FLOAT32,))
FLOAT_BINARY = NodeTypeChecker((dtypes.FLOAT32, dtypes.FLOAT32), (dtypes.FLOAT32,))

CALL = NodeTemplate("${call}", headers=HEADERS)
"""The template of parsers that build the whole kernel call themselves (key ``call``)."""

CALL_WITH_MATH = NodeTemplate("${call}", headers=HEADERS + ("math.h",))
""":data:`CALL` for kernels that call math.h (the float32 element-wise layers and the fused chains of them)."""


def single_binding(parser: NodeParser, checker: NodeTypeChecker, name: str, template: NodeTemplate = CALL,
                   tile_constraint: TileConstraint | None = None) -> tuple[NodeMapper, ...]:
    """The mapper table entry of an op with one parser and one binding (and how a tiling platform cuts it)."""
    return (NodeMapper(parser, (NodeBinding(checker, template),), name=name, tile_constraint=tile_constraint),)


def c_float(value: float) -> str:
    """An exact float literal (hexadecimal), with C's spelling of infinities."""
    if math.isinf(value):
        return "(-INFINITY)" if value < 0 else "INFINITY"
    rounded = float(np.float32(value))
    return f"{rounded.hex()}f" if rounded != 0 else "0.0f"


def int_array(values: Iterable[int]) -> str:
    """A C99 compound literal ``(const int32_t[]){…}`` (``{0}`` when empty)."""
    items = [str(int(value)) for value in values]
    return "(const int32_t[]){" + (", ".join(items) if items else "0") + "}"


def broadcast_strides(shape: tuple[int, ...], out_shape: tuple[int, ...]) -> list[int]:
    """Element strides of a dense ``shape`` broadcast to ``out_shape`` (0 along broadcast dims)."""
    padded = (1,) * (len(out_shape) - len(shape)) + tuple(shape)
    strides, running = [0] * len(out_shape), 1
    for axis in range(len(out_shape) - 1, -1, -1):
        strides[axis] = 0 if padded[axis] == 1 and out_shape[axis] != 1 else running
        running *= padded[axis]
    return strides


def collapse_broadcast(out_shape: tuple[int, ...], strides: list[list[int]]) -> tuple[list[int], list[list[int]]]:
    """Merge adjacent dimensions that are contiguous for every operand (fewer loop levels in C)."""
    shape = [dim for dim in out_shape]
    merged_shape: list[int] = []
    merged: list[list[int]] = [[] for _ in strides]
    for axis, dim in enumerate(shape):
        if dim == 1:
            continue
        if merged_shape and all(
            (ops[axis] == 0 and m[-1] == 0) or (m[-1] == ops[axis] * dim and ops[axis] != 0)
            for ops, m in zip(strides, merged)
        ):
            merged_shape[-1] *= dim
            for operand, ops in zip(merged, strides):
                operand[-1] = ops[axis]
            continue
        merged_shape.append(dim)
        for operand, ops in zip(merged, strides):
            operand.append(ops[axis])
    if not merged_shape:
        return [1], [[1] for _ in strides]
    return merged_shape, merged


def require_rank(buffer: Buffer, low: int, high: int, what: str) -> None:
    if not low <= len(buffer.shape) <= high:
        raise NodeMismatch("shape", f"{what} has rank {len(buffer.shape)}, the kernel takes rank {low}..{high}")


def single_axis(node: gs.Node, rank: int, default: int) -> int:
    """The node's ``axis`` attribute (``default`` when absent) made non-negative; a mismatch when out of range.

    Softmax and LayerNormalization read it the same way, from different families.
    """
    axis = int(NodeParser.attribute(node, "axis", default))
    if not -rank <= axis < max(rank, 1):
        raise NodeMismatch("attribute", f"axis={axis} is out of range for rank {rank}")
    return axis % rank if rank else 0
