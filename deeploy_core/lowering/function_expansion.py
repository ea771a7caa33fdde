"""Expanding ONNX ops the platform has no kernel for into their ONNX function bodies.

Many ONNX ops are defined by a *function body* in their schema: ``Celu``,
``Mish``, ``Softsign``, ``Shrink``, ``MeanVarianceNormalization``, ``Attention``,
``RotaryEmbedding``, ``Swish`` … are each a few primitive ops (some bodies are
built per node, from its attributes and input types: ONNX calls them
context-dependent).  A platform that maps the primitives then compiles the op
without a kernel of its own.  A native kernel always wins: only nodes whose op
key has no mapper at all on the platform (nor from an operator plugin) are
expanded.

The node is renamed to a private function of its own (its body may differ from
another node's of the same op), the schema's defaults are written for every
attribute the node leaves out (the body reads them), and onnx's inliner
replaces the call by the body with fresh value names (converting the body to
the model's opset when the body was written for an older one).  Bodies may
use ops that have bodies too, so expansion repeats, a bounded number of
rounds.  The result is then shaped again with onnx's inference; constant shape
arithmetic in the bodies (``Shape``, ``Size``, ``Range``, ``ConstantOfShape``)
is left to the constant folding that follows.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

import onnx
import onnx_graphsurgeon as gs
from onnx import defs, helper, inliner, shape_inference

from deeploy_core.errors import DeeployError

EXPANSION_DOMAIN = "deeploy.function_expansion"
"""The private domain each expanded node is called through until the inliner replaces it."""

MAX_ROUNDS = 6
"""How deep bodies may nest (a body's op that has a body of its own); ONNX's deepest chains are 3."""

_DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class ExpandedNode:
    """One node replaced by its function body: for the report."""

    name: str
    op: str
    body_nodes: int

    def describe(self) -> str:
        return f"{self.name!r} ({self.op}) expanded into its ONNX function body of {self.body_nodes} nodes"


def _default_opset(model: onnx.ModelProto) -> int:
    return next((item.version for item in model.opset_import if item.domain in _DEFAULT_DOMAINS), 0)


def _body_version(schema: defs.OpSchema, opset: int) -> tuple[int, bool] | None:
    """The newest function body version for ``opset`` and whether it is context-dependent (None: no body)."""
    # onnx's type stubs leave out the per-version function API of OpSchema (present since onnx 1.16)
    plain = [version for version in getattr(schema, "function_opset_versions") if version <= opset]
    dependent = [version for version in getattr(schema, "context_dependent_function_opset_versions")
                 if version <= opset]
    if not plain and not dependent:
        return None
    best_plain, best_dependent = max(plain, default=-1), max(dependent, default=-1)
    return (best_dependent, True) if best_dependent >= best_plain else (best_plain, False)


def _schema(op: str, opset: int) -> defs.OpSchema | None:
    try:
        return defs.get_schema(op, opset, "")
    except defs.SchemaError:
        return None


def expandable(node: onnx.NodeProto, opset: int) -> bool:
    """The node's op is in the default domain and its schema at ``opset`` has a function body."""
    if node.domain not in _DEFAULT_DOMAINS:
        return False
    schema = _schema(node.op_type, opset)
    return schema is not None and _body_version(schema, opset) is not None


def _with_defaults(node: onnx.NodeProto, schema: defs.OpSchema) -> onnx.NodeProto:
    """A copy of ``node`` with the schema's default written for every attribute it omits (bodies read them)."""
    complete = onnx.NodeProto()
    complete.CopyFrom(node)
    present = {attribute.name for attribute in node.attribute}
    for name in sorted(schema.attributes):
        default = schema.attributes[name].default_value
        if name not in present and default is not None and default.type != onnx.AttributeProto.UNDEFINED:
            attribute = onnx.AttributeProto()
            attribute.CopyFrom(default)
            attribute.name = name
            complete.attribute.append(attribute)
    return complete


def _infer_types(model: onnx.ModelProto) -> None:
    """Lenient onnx inference (in place): types for the values bodies introduced in an earlier round."""
    try:
        inferred = shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=False)
    except Exception:  # noqa: BLE001 - a model onnx cannot infer keeps the types it declares
        return
    del model.graph.value_info[:]
    model.graph.value_info.extend(inferred.graph.value_info)
    typed = {value.name for value in (*model.graph.input, *model.graph.output, *model.graph.value_info)}
    for tensor in model.graph.initializer:  # the inliner's version conversion looks types up in value_info only
        if tensor.name not in typed:
            model.graph.value_info.append(helper.make_tensor_value_info(tensor.name, tensor.data_type, list(tensor.dims)))


def _value_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    graph = model.graph
    types = {value.name: value.type for value in (*graph.input, *graph.output, *graph.value_info)}
    for tensor in graph.initializer:
        types.setdefault(tensor.name, helper.make_tensor_type_proto(tensor.data_type, list(tensor.dims)))
    return types


def _function(node: onnx.NodeProto, opset: int, types: dict[str, onnx.TypeProto], name: str) -> onnx.FunctionProto:
    """The function body of ``node`` (built for its attributes and input types when context-dependent)."""
    schema = _schema(node.op_type, opset)
    assert schema is not None, "checked by expandable"
    found = _body_version(schema, opset)
    assert found is not None, "checked by expandable"
    version, dependent = found
    if dependent:
        input_types = [types.get(item, onnx.TypeProto()).SerializeToString() for item in node.input]
        build = getattr(schema, "get_context_dependent_function_with_opset_version")
        raw: bytes = build(version, node.SerializeToString(), input_types)
    else:
        raw = getattr(schema, "get_function_with_opset_version")(version)
    if not raw:
        raise DeeployError(f"node {node.name!r} ({node.op_type}): ONNX could not build its function body for "
                           f"these attributes and input types, and the platform has no kernel for it")
    function = onnx.FunctionProto()
    function.ParseFromString(raw)
    function.name = name
    function.domain = EXPANSION_DOMAIN
    if not any(item.domain in _DEFAULT_DOMAINS for item in function.opset_import):
        function.opset_import.append(helper.make_opsetid("", version))
    return function


def expand_functions(model: onnx.ModelProto, mapped: Collection[str]) -> list[ExpandedNode]:
    """Replace (in place) every default-domain node whose op is not in ``mapped`` and has a function body.

    Returns what was expanded, in graph order, round by round.  The model's
    default opset must be set; the inliner converts older bodies to it.
    """
    opset = _default_opset(model)
    expanded: list[ExpandedNode] = []
    for _ in range(MAX_ROUNDS):
        chosen = [index for index, node in enumerate(model.graph.node)
                  if node.op_type not in mapped and expandable(node, opset)]
        if not chosen:
            return expanded
        _infer_types(model)  # context-dependent bodies and the inliner's version conversion read value types
        types = _value_types(model)
        for order, index in enumerate(chosen):
            node = model.graph.node[index]
            schema = _schema(node.op_type, opset)
            assert schema is not None
            complete = _with_defaults(node, schema)
            name = f"{node.op_type}_{len(expanded) + order}"
            function = _function(complete, opset, types, name)
            expanded.append(ExpandedNode(node.name or f"#{index}", node.op_type, len(function.node)))
            node.CopyFrom(complete)
            node.op_type, node.domain = name, EXPANSION_DOMAIN
            model.functions.append(function)
        model.opset_import.append(helper.make_opsetid(EXPANSION_DOMAIN, 1))
        try:
            inlined = inliner.inline_local_functions(model, convert_version=True)
        except Exception as error:  # noqa: BLE001 - the inliner raises RuntimeError with C++ texts
            names = ", ".join(repr(item.name) for item in expanded[-len(chosen):])
            raise DeeployError(f"expanding {names} into ONNX function bodies failed: "
                               f"{str(error).strip().splitlines()[0] if str(error).strip() else error}") from None
        model.CopyFrom(inlined)
        del model.functions[:]
        for node in model.graph.node:  # the inliner leaves body nodes unnamed: name them after their first output
            if not node.name and node.output:
                node.name = node.output[0]
        kept = [item for item in model.opset_import if item.domain != EXPANSION_DOMAIN]
        del model.opset_import[:]
        model.opset_import.extend(kept)
    leftover = sorted({node.op_type for node in model.graph.node if node.op_type not in mapped
                       and expandable(node, opset)})
    raise DeeployError(f"function expansion did not end after {MAX_ROUNDS} rounds (still to expand: "
                       f"{', '.join(leftover)})")


def unmapped_keys(graph: gs.Graph, mapped: Collection[str], opset: int) -> bool:
    """Whether some node of ``graph`` would be expanded (saves exporting the graph when none would)."""
    return any((node.domain or "") in _DEFAULT_DOMAINS and node.op not in mapped and _has_body(node.op, opset)
               for node in graph.nodes)


def _has_body(op: str, opset: int) -> bool:
    schema = _schema(op, opset)
    return schema is not None and _body_version(schema, opset) is not None
