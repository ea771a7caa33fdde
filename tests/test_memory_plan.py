"""Lifetimes and the arena plan, on graphs built directly (no platform needed)."""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.allocation import FirstFitAllocator
from deeploy_core.mapping import Layer, NodeBinding, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker
from deeploy_core.mapping.alias import ALIAS_MAPPERS
from deeploy_core.midend.aliases import mark_aliases
from deeploy_core.midend.context_builder import build_context
from deeploy_core.midend.lifetimes import Lifetime, compute_lifetimes
from deeploy_core.midend.memory_plan import plan_arena


class PassThrough(NodeParser):
    def parse(self, node, ctxt):
        return {}


MAPPER = NodeMapper(PassThrough(), (NodeBinding(NodeTypeChecker((None,), (None,)), NodeTemplate("")),))


def chain_graph() -> gs.Graph:
    x = gs.Variable("x", np.float32, (1, 16))
    a = gs.Variable("a", np.float32, (1, 16))
    v = gs.Variable("v", np.float32, (16,))
    b = gs.Variable("b", np.float32, (16,))
    y = gs.Variable("y", np.float32, (16,))
    shape = gs.Constant("shape", np.array([16], np.int64))
    nodes = [
        gs.Node("Relu", "n0", inputs=[x], outputs=[a]),
        gs.Node("Reshape", "n1", inputs=[a, shape], outputs=[v]),
        gs.Node("Relu", "n2", inputs=[v], outputs=[b]),
        gs.Node("Relu", "n3", inputs=[b], outputs=[y]),
    ]
    return gs.Graph(nodes=nodes, inputs=[x], outputs=[y])


def layers_for(graph: gs.Graph, ctxt) -> list[Layer]:
    layers = []
    for index, node in enumerate(graph.nodes):
        mapper = ALIAS_MAPPERS["Reshape"][0] if node.op == "Reshape" else MAPPER
        representation = mapper.parser(node, ctxt)
        layers.append(Layer(index, node, mapper, mapper.bindings[0], representation, f"l{index}"))
    return layers


def test_lifetimes_follow_aliases_and_keep_inputs_and_outputs_alive() -> None:
    graph = chain_graph()
    ctxt = build_context(graph)
    layers = layers_for(graph, ctxt)
    mark_aliases(layers, ctxt)
    lifetimes = compute_lifetimes(layers, ctxt)
    assert lifetimes == {
        "x": Lifetime(0, 4),  # graph input: whole run
        "a": Lifetime(0, 3),  # viewed as v until n2 consumes it
        "b": Lifetime(2, 4),
        "y": Lifetime(3, 4),  # graph output: to the end
    }


def test_arena_plan_reuses_dead_memory_and_is_verified() -> None:
    graph = chain_graph()
    ctxt = build_context(graph)
    layers = layers_for(graph, ctxt)
    mark_aliases(layers, ctxt)
    plan = plan_arena(layers, ctxt, FirstFitAllocator(), "first-fit", 16)
    assert plan.lower_bound == 3 * 64
    assert plan.arena_bytes == 3 * 64
    assert ctxt.storage_of("v").name == "a"
    offsets = {name: ctxt[name].offset for name in ("x", "a", "b", "y")}
    assert offsets["y"] == offsets["a"], "y reuses the memory of a, dead after n2"
