"""Choosing a mapper and binding for every node.

Each node's tensor types are fixed by the model, so the alternatives of one
node never constrain another: the search tries every mapper × binding of a
node in order and takes the first that fits.  Failing nodes are collected, not
raised one at a time, so the user sees every unsupported node in one report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import onnx_graphsurgeon as gs

from deeploy_core.ir import NetworkContext
from deeploy_core.mapping import Layer, Mismatch, NodeMapper, NodeMismatch, PluginMappers
from deeploy_core.midend.float_inputs import explain_failures
from deeploy_core.midend.unsupported import UnsupportedNode
from deeploy_core.platform import Platform


def _try_node(node: gs.Node, ctxt: NetworkContext, mappers: list[NodeMapper], index: int) -> Layer | list[Mismatch]:
    mismatches: list[Mismatch] = []
    for mapper in mappers:
        try:
            representation = mapper.parser(node, ctxt)
        except NodeMismatch as error:
            mismatches.append(replace(error.mismatch, alternative=mapper.label()))
            continue
        for binding in mapper.bindings:
            refusal = binding.type_checker.refusal(node, ctxt)
            if refusal is None:
                c_name = ctxt.mangler.mangle(f"{index}_{node.name or node.op}", "layer")
                return Layer(index, node, mapper, binding, representation, c_name)
            label = f"{mapper.label()} {binding.type_checker.signature()}"
            mismatches.append(replace(refusal, alternative=label))
    return mismatches


def qualified_op(node: gs.Node) -> str:
    """The key platforms map ops under: ``Conv`` in the default domain, ``com.microsoft.QGemm`` elsewhere."""
    return node.op if node.domain in (None, "", "ai.onnx") else f"{node.domain}.{node.op}"


def node_outcomes(
    graph: gs.Graph, ctxt: NetworkContext, platform: Platform,
    extra: PluginMappers | Mapping[str, Sequence[NodeMapper]] | None = None,
) -> list[Layer | UnsupportedNode]:
    """Per node, in graph order, its layer or why it has none (``supported-ops --model`` reports both).

    ``extra`` holds the mappers operator plugins add (see
    :func:`deeploy_core.plugins.operators.plugin_mappers`): overriding ones are
    tried before the platform's own, the others after them; a plain mapping
    means the latter.
    """
    added = extra if isinstance(extra, PluginMappers) else PluginMappers.appended(extra)
    outcomes: list[Layer | UnsupportedNode] = []
    for index, node in enumerate(graph.nodes):
        key = qualified_op(node)
        mappers = added.around(key, [mapper for _, mapper in platform.mappers_for(key)])
        outcome = _try_node(node, ctxt, mappers, index) if mappers else []
        outcomes.append(outcome if isinstance(outcome, Layer)
                        else UnsupportedNode(node.name or f"#{index}", key, tuple(outcome)))
    return outcomes


def map_nodes(
    graph: gs.Graph, ctxt: NetworkContext, platform: Platform,
    extra: PluginMappers | Mapping[str, Sequence[NodeMapper]] | None = None,
) -> list[Layer]:
    """A layer per node, or :class:`UnsupportedModelError` listing every node that has none.

    The alternatives tried are :func:`node_outcomes`'.
    """
    outcomes = node_outcomes(graph, ctxt, platform, extra)
    failures = [outcome for outcome in outcomes if isinstance(outcome, UnsupportedNode)]
    if failures:
        raise explain_failures(platform.name, graph, ctxt, failures)
    return [outcome for outcome in outcomes if isinstance(outcome, Layer)]
