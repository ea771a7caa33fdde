"""Typing and shaping nodes of schema-less ops with their declarations, inside onnx's strict inference.

While onnx's tools run, every declared node sits in a private domain: the
checker and the version converter let unknown domains pass, and strict shape
inference skips their nodes but uses whatever ``value_info`` says about their
outputs.  Inference therefore runs in rounds: after each, the declared nodes
whose inputs are now typed get their outputs filled in from their
declaration, until none is left (a chain of k declared nodes takes k + 1
rounds).  Afterwards each node gets its own domain back.  Nothing global is
touched, so compiles cannot influence each other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import onnx
from onnx import helper

from deeploy_core.frontend.custom_ops import DECLARED_DOMAIN, CustomOpSchema, Shape
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.node_label import node_label
from deeploy_core.frontend.unclaimed import DEFAULT_DOMAINS, schemaless_nodes


@dataclass
class DeclaredNodes:
    """The parked nodes' declarations and original domains, keyed by their first output."""

    schemas: dict[str, CustomOpSchema] = field(default_factory=dict)
    domains: dict[str, str] = field(default_factory=dict)
    opsets: list[onnx.OperatorSetIdProto] = field(default_factory=list)


def park_declared_ops(model: onnx.ModelProto, schemas: Mapping[tuple[str, str], CustomOpSchema]) -> DeclaredNodes:
    """Move every schema-less node that has a declaration to the private domain."""
    parked = DeclaredNodes(opsets=[opset for opset in model.opset_import if opset.domain not in DEFAULT_DOMAINS])
    for index, node in schemaless_nodes(model):
        domain = "" if node.domain in DEFAULT_DOMAINS else node.domain
        schema = schemas.get((domain, node.op_type))
        if schema is None:
            continue
        if not node.output or not node.output[0]:
            raise ModelImportError(f"{node_label(node, index)}: the node has no output")
        parked.schemas[node.output[0]] = schema
        parked.domains[node.output[0]] = node.domain
        node.domain = DECLARED_DOMAIN
    if parked.schemas and not any(opset.domain == DECLARED_DOMAIN for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(DECLARED_DOMAIN, 1))
    return parked


def unpark_declared_ops(model: onnx.ModelProto, parked: DeclaredNodes) -> None:
    """Give the declared nodes their own domain back, with the model's opset imports of those domains."""
    if not parked.schemas:
        return
    for node in model.graph.node:
        if node.domain == DECLARED_DOMAIN and node.output and node.output[0] in parked.domains:
            node.domain = parked.domains[node.output[0]]
    kept = [opset for opset in model.opset_import if opset.domain != DECLARED_DOMAIN]
    present = {opset.domain for opset in kept}
    kept += [opset for opset in parked.opsets if opset.domain not in present and opset.domain != DECLARED_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept)


def _label(node: onnx.NodeProto, index: int, parked: DeclaredNodes) -> str:
    """The node as error messages name it, with its own domain rather than the private one."""
    shown = onnx.NodeProto()
    shown.CopyFrom(node)
    shown.domain = parked.domains.get(node.output[0], node.domain) if node.output else node.domain
    return node_label(shown, index)


def _known_types(model: onnx.ModelProto) -> dict[str, tuple[int, Shape | None]]:
    """Element type and static shape (None when not fully known) of every typed tensor of the graph."""
    graph = model.graph
    known: dict[str, tuple[int, Shape | None]] = {}
    for tensor in graph.initializer:
        known[tensor.name] = (tensor.data_type, tuple(tensor.dims))
    for value in (*graph.input, *graph.value_info, *graph.output):
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type") or not tensor_type.elem_type:
            continue
        dims = tensor_type.shape.dim
        static = tensor_type.HasField("shape") and all(dim.HasField("dim_value") for dim in dims)
        known.setdefault(value.name, (tensor_type.elem_type, tuple(dim.dim_value for dim in dims) if static else None))
    return known


def _fill(model: onnx.ModelProto, node: onnx.NodeProto, label: str, schema: CustomOpSchema,
          known: dict[str, tuple[int, Shape | None]], warnings: list[str]) -> None:
    """Write the declared type and shape of ``node``'s outputs into the model being inferred."""
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
    types = [known[name][0] if name else None for name in node.input]
    shapes = [known[name][1] if name else None for name in node.input]
    try:
        out_types = list(schema.types(types, attributes))
        out_shapes = [tuple(int(dim) for dim in shape) for shape in schema.shapes(shapes, attributes)]
    except ValueError as error:
        raise ModelImportError(f"{label}: {error}") from None
    outputs = [name for name in node.output]
    if len(out_types) != len(outputs) or len(out_shapes) != len(outputs):
        raise ModelImportError(f"{label}: the op's declaration gives {len(out_types)} types and {len(out_shapes)} "
                               f"shapes for {len(outputs)} outputs")
    graph_outputs = {value.name: value for value in model.graph.output}
    value_infos = {value.name: value for value in model.graph.value_info}
    for name, elem_type, shape in zip(outputs, out_types, out_shapes):
        if not name:
            continue
        declared = graph_outputs.get(name)
        if declared is not None:
            tensor_type = declared.type.tensor_type
            old = [dim.dim_value for dim in tensor_type.shape.dim]
            if tensor_type.HasField("shape") and old != list(shape):
                warnings.append(f"output {name!r}: declared shape {old} disagrees with the inferred {list(shape)}; "
                                "using the inferred shape")
            elem_type = tensor_type.elem_type or elem_type  # the model's declared type stays (fake-quantised exports)
            declared.CopyFrom(helper.make_tensor_value_info(name, elem_type, shape))
        elif name in value_infos:
            value_infos[name].CopyFrom(helper.make_tensor_value_info(name, elem_type, shape))
        else:
            model.graph.value_info.append(helper.make_tensor_value_info(name, elem_type, shape))


def infer_with_declarations(model: onnx.ModelProto, parked: DeclaredNodes,
                            infer: Callable[[onnx.ModelProto], onnx.ModelProto]) -> tuple[onnx.ModelProto, list[str]]:
    """``infer`` (onnx's strict inference), repeated with declared outputs filled in until all are typed."""
    warnings: list[str] = []
    filled: set[str] = set()
    while True:
        inferred = infer(model)
        pending = [(index, node) for index, node in enumerate(inferred.graph.node)
                   if node.domain == DECLARED_DOMAIN and node.output and node.output[0] in parked.schemas
                   and node.output[0] not in filled]
        if not pending:
            return inferred, warnings
        known = _known_types(inferred)
        progress = False
        for index, node in pending:
            missing = [name for name in node.input if name and (name not in known or known[name][1] is None)]
            if missing:
                continue
            _fill(model, node, _label(node, index, parked), parked.schemas[node.output[0]], known, warnings)
            filled.add(node.output[0])
            progress = True
        if not progress:
            index, node = pending[0]
            name = next(name for name in node.input if name and (name not in known or known[name][1] is None))
            raise ModelImportError(f"{_label(node, index, parked)}: input {name!r} has no static type and shape to "
                                   "derive the op's outputs from")
