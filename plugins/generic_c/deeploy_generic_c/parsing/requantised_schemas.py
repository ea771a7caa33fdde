"""The declarations of Deeploy's fused linear ops, which have no ONNX schema: RQGemm, RQMatMul, RequantizedConv.

Their output shapes are Gemm's ``[M, N]`` after ``transA``/``transB``, numpy matmul broadcasting, and Conv's
(computed by onnx's own Conv inference); their element type is float for the float-declared tensors of
QuantLib exports, else the RequantShift's type from ``n_levels`` and ``signed``.  The matmul/gemm family
declares the first two, the conv family the third, so the shared reading of the attributes lives here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper, shape_inference

_FLOATS = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16})
_BY_BITS = ((8, TensorProto.UINT8, TensorProto.INT8), (16, TensorProto.UINT16, TensorProto.INT16),
            (32, TensorProto.UINT32, TensorProto.INT32))


def _number(value: Any) -> float:
    """An attribute as one number (QuantLib writes them as ints, floats or 1-element tensors)."""
    if isinstance(value, TensorProto):
        value = numpy_helper.to_array(value)
    return float(np.asarray(value).reshape(-1)[0])


def requantised_type(types: Sequence[int | None], attributes: Mapping[str, Any]) -> Sequence[int]:
    """Float-declared exports stay float (the integer typing pass retypes them); integers get RequantShift's type."""
    first = types[0] if types else None
    if not first:
        raise ValueError("input A has no element type")
    if first in _FLOATS:
        return [first]
    levels = attributes.get("n_levels_out", attributes.get("n_levels"))
    if levels is None or "signed" not in attributes:
        raise ValueError("attributes n_levels (or n_levels_out) and signed are required")
    signed = bool(_number(attributes["signed"]))
    for bits, unsigned_type, signed_type in _BY_BITS:
        if _number(levels) <= 2**bits:
            return [signed_type if signed else unsigned_type]
    raise ValueError(f"n_levels={_number(levels)} exceeds 32 bits")


def gemm_shape(shapes: Sequence[tuple[int, ...] | None], attributes: Mapping[str, Any]) -> Sequence[tuple[int, ...]]:
    """``[M, N]`` of ``op(A) @ op(B)`` with ``transA``/``transB``; both operands must be matrices."""
    a, b = (shapes[0], shapes[1]) if len(shapes) > 1 else (None, None)
    if a is None or b is None or len(a) != 2 or len(b) != 2:
        raise ValueError(f"A and B must be 2-D (got {a} and {b})")
    m, k = (a[1], a[0]) if int(attributes.get("transA", 0)) else a
    k_b, n = (b[1], b[0]) if int(attributes.get("transB", 0)) else b
    if k != k_b:
        raise ValueError(f"inner dimensions differ: op(A) is {m}x{k}, op(B) is {k_b}x{n}")
    return [(m, n)]


def matmul_shape(shapes: Sequence[tuple[int, ...] | None], attributes: Mapping[str, Any]) -> Sequence[tuple[int, ...]]:
    """numpy ``matmul`` of two operands of rank ≥ 2 (batch dimensions broadcast)."""
    a, b = (shapes[0], shapes[1]) if len(shapes) > 1 else (None, None)
    if a is None or b is None or len(a) < 2 or len(b) < 2:
        raise ValueError(f"A and B must have rank 2 or more (got {a} and {b})")
    if a[-1] != b[-2]:
        raise ValueError(f"inner dimensions differ: A is {a}, B is {b}")
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2])))
    except ValueError:
        raise ValueError(f"batch dimensions of {a} and {b} do not broadcast") from None
    return [(*batch, a[-2], b[-1])]


_CONV_ATTRIBUTES = ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides")


def conv_shape(shapes: Sequence[tuple[int, ...] | None], attributes: Mapping[str, Any]) -> Sequence[tuple[int, ...]]:
    """The output shape of ONNX's Conv on x and w with the node's Conv attributes (onnx's strict inference)."""
    x, w = (shapes[0], shapes[1]) if len(shapes) > 1 else (None, None)
    if x is None or w is None:
        raise ValueError("x and w need static shapes")
    node = helper.make_node("Conv", ["x", "w"], ["y"],
                            **{name: attributes[name] for name in _CONV_ATTRIBUTES if name in attributes})
    graph = helper.make_graph([node], "conv_shape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x)),
                                                     helper.make_tensor_value_info("w", TensorProto.FLOAT, list(w))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    try:
        inferred = shape_inference.infer_shapes(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]),
                                                strict_mode=True)
    except Exception as error:  # noqa: BLE001 - onnx raises InferenceError and plain RuntimeErrors
        lines = str(error).strip().splitlines()
        raise ValueError(lines[-1] if lines else "onnx's Conv shape inference failed") from None
    dims = inferred.graph.output[0].type.tensor_type.shape.dim
    if not dims or any(not dim.HasField("dim_value") for dim in dims):
        raise ValueError(f"Conv of x {list(x)} and w {list(w)} has no static output shape")
    return [tuple(int(dim.dim_value) for dim in dims)]
