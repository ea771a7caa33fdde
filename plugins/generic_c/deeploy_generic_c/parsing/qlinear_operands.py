"""Operand parsing the QLinear kernels share (QOperator, exact mode's float32, fixed-point's TFLite, softmax).

Every arithmetic reads the same ONNX signature: a binary op's A, B and Y with per-tensor scales broadcast
against each other, or a one-input op's X and Y with a per-tensor input scale.  One place reads them so that
the kernels refuse the same nodes with the same messages.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMismatch, NodeParser, NodeTypeChecker
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast

Operand = tuple[Buffer, np.ndarray, np.ndarray]
"""(tensor, scale values, zero-point values), as ``quantised_operand`` reads them."""
Output = tuple[Buffer, float, int]
"""(tensor, scale, zero point) of the per-tensor output."""


def _constant(ctxt: NetworkContext, name: str, what: str) -> np.ndarray:
    values = ctxt[name].values
    if values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    return np.asarray(values).reshape(-1)


def quantised_operand(ctxt: NetworkContext, node: gs.Node, first: int) -> tuple[Buffer, np.ndarray, np.ndarray]:
    """(tensor, scale values, zero-point values) of the operand whose tensor is input ``first``."""
    tensor = ctxt[node.inputs[first].name]
    if tensor.dtype.is_float:
        raise NodeMismatch("dtype", f"input {first} is {tensor.dtype}; the fixed-point kernel takes integers")
    scale = _constant(ctxt, node.inputs[first + 1].name, f"input {first + 1} (scale)")
    zero = _constant(ctxt, node.inputs[first + 2].name, f"input {first + 2} (zero point)") if NodeParser.is_present(node, first + 2) \
        else np.zeros(1, np.int64)
    return tensor, scale.astype(np.float64), zero.astype(np.int64)


def quantised_output(ctxt: NetworkContext, node: gs.Node, scale_index: int) -> tuple[Buffer, float, int]:
    y = ctxt[node.outputs[0].name]
    scale = _constant(ctxt, node.inputs[scale_index].name, "the output scale")
    zero = _constant(ctxt, node.inputs[scale_index + 1].name, "the output zero point") if NodeParser.is_present(node, scale_index + 1) \
        else np.zeros(1, np.int64)
    if scale.size != 1 or zero.size != 1:
        raise NodeMismatch("shape", "the output must be quantised per tensor")
    return y, float(scale[0]), int(zero[0])


def per_tensor_value(values: np.ndarray, what: str) -> int:
    if values.size != 1:
        raise NodeMismatch("shape", f"{what} must be per tensor")
    return int(values[0])


def binary_operands(ctxt: NetworkContext, node: gs.Node) -> tuple[Operand, Operand, Output]:
    """A (inputs 0-2), B (3-5) and Y (scale and zero point at 6-7) of QLinearAdd / QLinearMul, scales per tensor."""
    a = quantised_operand(ctxt, node, 0)
    b = quantised_operand(ctxt, node, 3)
    y = quantised_output(ctxt, node, 6)
    if a[1].size != 1 or b[1].size != 1:
        raise NodeMismatch("shape", "scales must be per tensor")
    return a, b, y


def binary_zero_points(a_zero: np.ndarray, b_zero: np.ndarray) -> tuple[int, int]:
    """A's and B's zero points, each a single value."""
    return per_tensor_value(a_zero, "A's zero point"), per_tensor_value(b_zero, "B's zero point")


def binary_layout(a: Buffer, b: Buffer, y: Buffer) -> tuple[list[int], list[list[int]]]:
    """The output's loop extents and A's and B's strides along them (numpy broadcasting, collapsed)."""
    return collapse_broadcast(y.shape, [broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)])


def unary_operands(ctxt: NetworkContext, node: gs.Node) -> tuple[Operand, Output]:
    """X (inputs 0-2) and Y (scale and zero point at 3-4) of a one-input QLinear op, the input scale per tensor."""
    x = quantised_operand(ctxt, node, 0)
    y = quantised_output(ctxt, node, 3)
    if x[1].size != 1:
        raise NodeMismatch("shape", "the input scale must be per tensor")
    return x, y


def input_zero_point(x_zero: np.ndarray) -> int:
    """X's zero point, a single value."""
    return per_tensor_value(x_zero, "the input zero point")


def any_types(arity: int) -> NodeTypeChecker:
    """A checker that takes any types for ``arity`` inputs and one output: the QLinear parsers check types themselves."""
    return NodeTypeChecker((None,) * arity, (None,))
