"""Which nodes of a model each platform supports, and why not: ``supported-ops --model``.

The answer must be the compiler's own, so this runs the compiler's stages on
the model: the front end's claims and declarations decide the schema-less
ops, the platform's ``frontend`` and ``lower`` stages import and rewrite the
graph exactly as a compile would, and :func:`~deeploy_core.midend.parse.node_outcomes`
tries every mapper and binding the way ``parse`` does, only without stopping
at the first unsupported node.  The model may be one that does not compile:
every node gets a verdict, and when the front end refuses the model because
of some nodes, the others are reported as not checked (with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import onnx
import onnx_graphsurgeon as gs
from onnx import helper

from deeploy_core.compilation import CompileSettings
from deeploy_core.deployer import Deployer
from deeploy_core.errors import DeeployError
from deeploy_core.frontend.claims import op_claims
from deeploy_core.frontend.custom_ops import OpClaims
from deeploy_core.frontend.declared_ops import park_declared_ops
from deeploy_core.frontend.importer import read_model
from deeploy_core.frontend.legacy_ops import park_legacy_ops
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.unclaimed import (
    DEFAULT_DOMAINS, refuse_unclaimed, refuse_undeclared, schemaless_nodes,
)
from deeploy_core.ir import DataType
from deeploy_core.mapping import Layer
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.parse import node_outcomes
from deeploy_core.midend.unsupported import UnsupportedModelError, UnsupportedNode
from deeploy_core.node_support_reasons import NodeVerdict, failure_verdict
from deeploy_core.plugins import PluginHost
from deeploy_core.plugins.operators import plugin_mappers
from deeploy_core.supported_ops import platform_data


@dataclass(frozen=True)
class ModelNode:
    """A node as the report lists it: the model's own nodes, then those only lowering made (``from_lowering``)."""

    name: str
    op: str
    domain: str
    from_lowering: bool = False


@dataclass
class ModelSupport:
    """Every node's verdict on every checked platform (``verdicts[platform][i]`` is that of ``nodes[i]``)."""

    model: str
    platforms: tuple[str, ...]
    nodes: list[ModelNode] = field(default_factory=list)
    verdicts: dict[str, list[NodeVerdict | None]] = field(default_factory=dict)
    """None where a node does not exist on that platform (made by another platform's lowering)."""

    def all_supported(self) -> bool:
        """Whether every node is supported on every checked platform (the command's exit status)."""
        return all(verdict is None or verdict.supported for verdicts in self.verdicts.values() for verdict in verdicts)

    def as_json(self) -> dict[str, object]:
        return {
            "model": self.model,
            "platforms": list(self.platforms),
            "supported": self.all_supported(),
            "nodes": [
                {"name": node.name, "op": node.op, "domain": node.domain, "from_lowering": node.from_lowering,
                 "platforms": {platform: verdicts[index].as_json()  # type: ignore[union-attr]
                               for platform, verdicts in self.verdicts.items() if verdicts[index] is not None}}
                for index, node in enumerate(self.nodes)
            ],
        }


def _alone(model: onnx.ModelProto, node: onnx.NodeProto) -> onnx.ModelProto:
    """A model holding only ``node`` and what the model declares about tensors (no weights): cheap to check."""
    graph = helper.make_graph([node], model.graph.name, [], list(model.graph.output), value_info=model.graph.value_info)
    return helper.make_model(graph, opset_imports=list(model.opset_import))


def _reason(message: str) -> str:
    """The front end's message without its leading ``node 'x' (Op): `` (the table names the node)."""
    text = message.splitlines()[0]
    return text.split("): ", 1)[1] if text.startswith("node ") and "): " in text else text


def _front_end_verdicts(model: onnx.ModelProto, claims: OpClaims) -> dict[int, NodeVerdict]:
    """Verdicts for the schema-less nodes the front end refuses, by its own two checks, one node at a time."""
    verdicts = {}
    for index, node in schemaless_nodes(model):
        alone = _alone(model, node)
        try:
            park_legacy_ops(alone)  # the importer's own sequence (see frontend.importer.canonicalise)
            refuse_unclaimed(alone, claims)
            park_declared_ops(alone, claims.schemas)
            refuse_undeclared(alone, claims)
        except UnsupportedModelError as error:
            verdicts[index] = NodeVerdict("no-mapper", _reason(error.nodes[0].describe()))
        except ModelImportError as error:
            verdicts[index] = NodeVerdict("no-declaration", _reason(str(error)))
    return verdicts


def _not_checked(model: onnx.ModelProto, known: dict[int, NodeVerdict], why: str) -> list[NodeVerdict]:
    """Verdicts when the model does not import: those the front end gave, ``not-checked`` with ``why`` for the rest."""
    return [known.get(index, NodeVerdict("not-checked", why)) for index in range(len(model.graph.node))]


def _layer_verdict(outcome: Layer | UnsupportedNode, failure: NodeVerdict | None) -> NodeVerdict:
    """A mapped node's verdict names its kernel (as report.json does) and the types it binds."""
    if isinstance(outcome, Layer):
        return NodeVerdict("supported", kernel=f"{outcome.mapper.label()} ({outcome.binding.type_checker.signature()})")
    assert failure is not None
    return failure


def _downstream(model: onnx.ModelProto, node: onnx.NodeProto) -> set[str]:
    """Every tensor of the model computed from ``node``'s outputs (what a fusion starting at ``node`` produces)."""
    reached = {name for name in node.output if name}
    for later in model.graph.node:  # nodes are in topological order (the checker requires it)
        if any(name in reached for name in later.input):
            reached.update(name for name in later.output if name)
    return reached


def _vanished(model: onnx.ModelProto, node: onnx.NodeProto, graph: gs.Graph, lowered: list[NodeVerdict]
              ) -> NodeVerdict:
    """A model node that no lowered node produces: folded into a constant, fused into the lowered node that reads
    its inputs and produces what was computed from it (whose verdict it then shares), or removed."""
    tensors = graph.tensors()
    if any(isinstance(tensors.get(name), gs.Constant) for name in node.output):
        return NodeVerdict("lowered", "folded into a constant by lowering")
    downstream = _downstream(model, node)
    for index, candidate in enumerate(graph.nodes):
        reads = any(tensor.name in node.input for tensor in candidate.inputs)
        if reads and any(tensor.name in downstream for tensor in candidate.outputs):
            into = f"fused by lowering into {candidate.name or f'#{index}'} ({candidate.op})"
            verdict = lowered[index]
            if verdict.supported:
                return NodeVerdict("lowered", into)
            return NodeVerdict(verdict.kind, f"{into}, which is not supported: {verdict.reason}")
    return NodeVerdict("lowered", "removed by lowering")


def check_platform(host: PluginHost, path: Path, model: onnx.ModelProto, platform_name: str,
                   input_shapes: dict[str, tuple[int, ...]], input_types: dict[str, DataType]
                   ) -> tuple[list[NodeVerdict], list[tuple[ModelNode, NodeVerdict]]]:
    """The model's nodes' verdicts on one platform, and the nodes lowering made that the model does not have.

    A model node is matched to the lowered node that produces one of its
    outputs (a fused ``Conv`` + ``RequantShift`` is judged on the
    ``RequantShift`` row); a node whose outputs no lowered node produces was
    folded or fused away (:func:`_vanished`).
    """
    platform = platform_data(host, platform_name)
    claims = op_claims(host, platform)
    known = _front_end_verdicts(model, claims)
    if known:
        names = ", ".join(repr(model.graph.node[index].name or f"#{index}") for index in sorted(known))
        return _not_checked(model, known, f"not tried: the front end refuses the model on {platform_name} "
                                          f"because of {names}"), []
    settings = CompileSettings(input_shapes=input_shapes, input_types=input_types)
    deployer = host.create("platform", platform_name, settings)
    if not isinstance(deployer, Deployer):  # compose refuses it the same way when it compiles
        raise DeeployError(f"platform {platform_name!r} made {type(deployer).__name__}, not a Deployer")
    compilation = deployer.compilation
    compilation.host, compilation.model = host, str(path)
    try:
        deployer.frontend()
        deployer.lower()
        graph = compilation.graph
        ctxt = build_context(graph)
    except DeeployError as error:
        return _not_checked(model, {}, f"not tried: {platform_name} refuses the model: {error}"), []
    outcomes = node_outcomes(graph, ctxt, platform, plugin_mappers(host, platform_name))
    lowered = [
        _layer_verdict(outcome, None if isinstance(outcome, Layer) else
                       failure_verdict(outcome, node, ctxt, platform_name, claims.supporters(outcome.op_type)))
        for node, outcome in zip(graph.nodes, outcomes)
    ]
    producer: dict[str, int] = {}
    for index, node in enumerate(graph.nodes):
        for tensor in node.outputs:
            producer.setdefault(tensor.name, index)
    used: set[int] = set()
    verdicts = []
    for node in model.graph.node:
        found = [producer[name] for name in node.output if name in producer]
        if not found:
            verdicts.append(_vanished(model, node, graph, lowered))
            continue
        used.add(found[0])
        verdict = lowered[found[0]]
        made = graph.nodes[found[0]].op
        if verdict.supported and made != node.op_type:
            verdict = NodeVerdict("supported", f"lowered to {made}", verdict.kernel)
        verdicts.append(verdict)
    extra = [(ModelNode(node.name or f"#{index}", node.op, node.domain or "", from_lowering=True), lowered[index])
             for index, node in enumerate(graph.nodes) if index not in used]
    return verdicts, extra


def check_model(host: PluginHost, path: Path, platforms: tuple[str, ...],
                input_shapes: dict[str, tuple[int, ...]] | None = None,
                input_types: dict[str, DataType] | None = None) -> ModelSupport:
    """Every node of the model at ``path`` on each of ``platforms`` (each is checked on its own)."""
    model = read_model(path)
    support = ModelSupport(path.name, platforms)
    support.nodes = [ModelNode(node.name or f"#{index}", node.op_type, "" if node.domain in DEFAULT_DOMAINS
                               else node.domain) for index, node in enumerate(model.graph.node)]
    for name in platforms:
        verdicts, extra = check_platform(host, path, model, name, dict(input_shapes or {}), dict(input_types or {}))
        support.verdicts[name] = list(verdicts) + [None] * (len(support.nodes) - len(verdicts))
        for node, verdict in extra:
            if node not in support.nodes:  # the same node made by another platform's lowering shares its row
                support.nodes.append(node)
                for other in support.verdicts.values():
                    other.append(None)
            support.verdicts[name][support.nodes.index(node)] = verdict
    return support
