"""Deeploy's ``RQGemm``/``RQMatMul`` and ``RequantizedConv``: a linear op fused with its RequantShift, as a model.

Deeploy's PULP and Siracusa targets fuse ``Gemm → RequantShift`` into
``RQGemm(A, B, [C], add, mul)`` and ``MatMul → RequantShift`` into
``RQMatMul(A, B, add, mul)``: the RequantShift's attributes (``div``,
``n_levels``/``n_levels_out``, ``signed``) move onto the fused node and its
``add`` input comes *before* ``mul``.  ``deeploy-op-semantics.md`` §8 gives
their meaning as the unfused integer op (§3) followed by RequantShift (§2), so
they run on the kernels this platform already has for its own fusions
(``RequantizedGemm``/``RequantizedMatMul`` of :mod:`.integer`), reading mul and
add from their positions.  Deeploy has no test data for either op, so the
arithmetic is the written one (unverified against a peer).

``RequantizedConv(x, w, [bias], mul, add)`` is the form this platform's own
lowering fuses ``Conv → RequantShift`` into (mul before add, the Conv's and the
RequantShift's attributes); declaring it lets a model that was fused already
(by this compiler or by hand) come in as it is.  Deeploy's PULP deployer
builds a node of the same name with a different contract (rounding folded
into ``add``, a ``shift`` attribute), which only exists inside Deeploy.

None of these ops has an ONNX schema: :data:`SCHEMAS` declares their output
shapes (Gemm's ``[M, N]`` after ``transA``/``transB``; numpy matmul
broadcasting; Conv's, computed by onnx's own Conv inference) and element types
(float for the float-declared tensors of QuantLib exports, else the
RequantShift's type from ``n_levels`` and ``signed``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from onnx import TensorProto, helper, numpy_helper, shape_inference

from deeploy_core.plugin_api import CustomOpSchema, NodeBinding, NodeMapper
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE
from deeploy_generic_c.ops.integer import RequantizedGemmParser, RequantizedMatMulParser

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


class RQGemmParser(RequantizedGemmParser):
    """Deeploy's RQGemm: inputs A, B, [C], add, mul; Gemm attributes plus RequantShift's."""

    requant_inputs = (-1, -2)


class RQMatMulParser(RequantizedMatMulParser):
    """Deeploy's RQMatMul: inputs A, B, add, mul (no bias); RequantShift's attributes."""

    inputs = (4, 4)
    requant_inputs = (-1, -2)


SCHEMAS: tuple[CustomOpSchema, ...] = (
    CustomOpSchema("RQGemm", shapes=gemm_shape, types=requantised_type),
    CustomOpSchema("RQMatMul", shapes=matmul_shape, types=requantised_type),
    CustomOpSchema("RequantizedConv", shapes=conv_shape, types=requantised_type),
)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "RQGemm": (NodeMapper(RQGemmParser(), (NodeBinding(ANY, INLINE),), name="RQGemm integer"),),
    "RQMatMul": (NodeMapper(RQMatMulParser(), (NodeBinding(ANY, INLINE),), name="RQMatMul integer"),),
}
