"""Nodes whose op neither ONNX nor the selected platform knows, reported before onnx's checker sees them.

The checker would stop at the first such node with "No Op registered for X
with domain_version of N" (and ignore ops of unknown domains altogether, to
fail later in some unrelated place).  Refusing them here, all at once, gives
the user the same unsupported-op report the mapper gives: every node, its op
and domain, and which installed platforms do support the op.
"""

from __future__ import annotations

import onnx

from deeploy_core.frontend.custom_ops import DECLARED_DOMAIN, OpClaims
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.dialect_ops import SHAPE_PRESERVING_DIALECT_OPS
from deeploy_core.frontend.legacy_ops import PARKING_DOMAIN
from deeploy_core.frontend.node_label import node_label

DEFAULT_DOMAINS = ("", "ai.onnx")


def has_onnx_schema(node: onnx.NodeProto) -> bool:
    """Whether onnx (any opset) defines the node's op in its domain."""
    domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
    return bool(onnx.defs.has(node.op_type, domain))


def op_key(node: onnx.NodeProto) -> str:
    """The key platforms map ops under: ``Conv``, or ``com.example.Foo`` outside the default domain."""
    return node.op_type if node.domain in DEFAULT_DOMAINS else f"{node.domain}.{node.op_type}"


def schemaless_nodes(model: onnx.ModelProto) -> list[tuple[int, onnx.NodeProto]]:
    """(index, node) of every node without an ONNX schema (contrib ops parked for the converter excepted)."""
    return [(index, node) for index, node in enumerate(model.graph.node)
            if node.domain != PARKING_DOMAIN and not has_onnx_schema(node)]


def refuse_unclaimed(model: onnx.ModelProto, claims: OpClaims) -> None:
    """Raise the unsupported-op report for every schema-less node the platform does not claim."""
    from deeploy_core.midend.unsupported import UnsupportedModelError, UnsupportedNode

    refused = []
    for index, node in schemaless_nodes(model):
        # Deeploy's shape-preserving dialect ops are mapped under their bare name, whatever domain QuantLib wrote.
        key = node.op_type if node.op_type in SHAPE_PRESERVING_DIALECT_OPS else op_key(node)
        if key in claims.claimed:
            continue
        domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
        refused.append(UnsupportedNode(node.name or f"#{index}", node.op_type, (), domain=domain,
                                       supported_on=claims.supporters(key)))
    if refused:
        raise UnsupportedModelError(claims.platform, refused)


def refuse_undeclared(model: onnx.ModelProto, claims: OpClaims) -> None:
    """A claimed schema-less op must come with a declaration (Deeploy's shape-preserving dialect has the core's).

    Without one, onnx's inference would leave its outputs untyped and the
    compile would stop at some later node with a message that hides the cause
    — unless the model itself declares every output's type and static shape
    (a contrib op such as com.microsoft.QLinearAveragePool feeding a graph
    output), which is what the importer accepted before declarations existed.
    """
    described = _typed_and_shaped_in_model(model)
    for index, node in schemaless_nodes(model):
        if node.domain == DECLARED_DOMAIN or node.op_type in SHAPE_PRESERVING_DIALECT_OPS:
            continue
        if all(name in described for name in node.output if name):
            continue  # the model itself declares what the node makes (e.g. a contrib op feeding a graph output)
        raise ModelImportError(
            f"{node_label(node, index)}: the op has no ONNX schema and nothing declares its output types and shapes "
            f"on platform {claims.platform!r}: the platform or operator plugin that maps it must declare a "
            "CustomOpSchema")


def _typed_and_shaped_in_model(model: onnx.ModelProto) -> set[str]:
    """Tensors the model declares with an element type and a full static shape (graph outputs, value_info)."""
    described = set()
    for value in (*model.graph.output, *model.graph.value_info):
        tensor_type = value.type.tensor_type
        if tensor_type.elem_type and tensor_type.HasField("shape") and all(
                dim.HasField("dim_value") and dim.dim_value > 0 for dim in tensor_type.shape.dim):
            described.add(value.name)
    return described
