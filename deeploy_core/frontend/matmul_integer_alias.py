"""Float-declared ``MatMulInteger`` nodes of QuantLib exports, read as the integer MatMul Deeploy makes of them.

QuantLib writes integer networks with every tensor declared FLOAT (see
``deeploy_core.lowering.integer_types``), and Deeploy's Generic platform maps
``MatMulInteger`` as an alias of integer ``MatMul`` with no zero points.  ONNX's
schema allows only int8/uint8 operands, so onnx's strict shape inference
refuses such a node before any platform sees it.  When the selected platform
claims ``MatMulInteger``, a node with no zero-point inputs whose operands are
not known to be integers is therefore renamed ``MatMul`` (default domain)
before onnx's tools run: same operands, same output, and — once the user names
the integer input types — the same integer arithmetic, which the integer type
rules give an int32 result like MatMulInteger's.  Real MatMulInteger nodes
(integer operands, or zero points) are left to ONNX's schema.

Operand types come from onnx's own (non-strict) inference over the model as it
stands at that point: graph inputs, initializers and everything standard ops
derive from them.  An operand whose type nothing determines (the output of an
op without an ONNX schema) counts as float-declared, as in QuantLib exports.
A float operand of a MatMulInteger that has zero points fits neither reading;
it is refused in one line that says which two forms are accepted.
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, shape_inference

from deeploy_core.frontend.custom_ops import OpClaims
from deeploy_core.frontend.errors import ModelImportError

_FLOAT_TYPES = frozenset({TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16})
_INTEGER_TYPES = frozenset({TensorProto.INT8, TensorProto.UINT8, TensorProto.INT16, TensorProto.UINT16,
                            TensorProto.INT32, TensorProto.UINT32, TensorProto.INT64, TensorProto.UINT64})


def _is_alias_candidate(node: onnx.NodeProto) -> bool:
    """A default-domain MatMulInteger with exactly its two operands (no zero points)."""
    present = [name for name in node.input if name]
    return node.op_type == "MatMulInteger" and node.domain in ("", "ai.onnx") and len(present) == 2 \
        and list(node.input[:2]) == present


def _refuse_float_operands_with_zero_points(model: onnx.ModelProto, types: dict[str, int]) -> None:
    """One line for a MatMulInteger with zero points whose operand is declared float (no reading fits it)."""
    for node in model.graph.node:
        if node.op_type != "MatMulInteger" or node.domain not in ("", "ai.onnx") or _is_alias_candidate(node):
            continue
        floats = [name for name in node.input[:2] if types.get(name, 0) in _FLOAT_TYPES]
        if floats:
            label = node.name or node.output[0]
            raise ModelImportError(
                f"node {label!r} (MatMulInteger): operand {floats[0]!r} is declared float but the node has zero "
                f"points; declare A and B int8/uint8 (ONNX's MatMulInteger) or drop the zero points (the "
                f"float-declared form is read as integer MatMul)")


def _element_types(model: onnx.ModelProto) -> dict[str, int]:
    """Every tensor's element type that onnx's non-strict inference can tell (0 or absent: unknown)."""
    try:
        inferred = shape_inference.infer_shapes(model, check_type=False, strict_mode=False)
    except Exception:  # noqa: BLE001 - without inference only the declared types below are known
        inferred = model
    graph = inferred.graph
    types = {value.name: value.type.tensor_type.elem_type
             for value in [*graph.input, *graph.value_info, *graph.output] if value.type.HasField("tensor_type")}
    types.update({tensor.name: tensor.data_type for tensor in graph.initializer})
    return types


def alias_float_matmul_integer(model: onnx.ModelProto, claims: OpClaims | None) -> list[str]:
    """Rename float-declared, zero-point-free MatMulInteger nodes to MatMul; returns the renamed nodes' names.

    Every candidate is renamed first (a MatMulInteger's int32 output would otherwise make the operands of the
    nodes after it look like integers), then candidates with an operand inferred to be an integer get their op
    back, until nothing changes: a real MatMulInteger's int32 result then reaches its consumers again.
    """
    if claims is None or "MatMulInteger" not in claims.claimed:
        return []
    if any(node.op_type == "MatMulInteger" and not _is_alias_candidate(node) for node in model.graph.node):
        _refuse_float_operands_with_zero_points(model, _element_types(model))
    renamed = [node for node in model.graph.node if _is_alias_candidate(node)]
    for node in renamed:
        node.op_type, node.domain = "MatMul", ""
    while renamed:
        types = _element_types(model)
        integer = [node for node in renamed if any(types.get(name, 0) in _INTEGER_TYPES for name in node.input[:2])]
        if not integer:
            break
        for node in integer:
            node.op_type = "MatMulInteger"
        renamed = [node for node in renamed if node not in integer]
    return [node.name or node.output[0] for node in renamed]
