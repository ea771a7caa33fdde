"""Fusion of float element-wise chains into one loop (``FusedElementwise``).

Fake-quantised float networks (Transformer_DeepQuant) spend most of their
layers on ``Div → Add → Round → Clip → Sub → Mul`` chains over one small
tensor.  Each layer is its own loop that streams a whole intermediate array
through the arena; fused, the value of an element stays in a register from
the chain's input to its output, the intermediates vanish from the graph (and
so from the arena), and the network has one loop where it had fifteen.

The fused node computes exactly what the chain computed: the same float
operations on each element in the same order, each rounded to float32 (C's
``float`` arithmetic with ``FLT_EVAL_METHOD`` 0).  The one thing a compiler
may do differently with the operations in one expression sequence instead of
in separate loops is contract a product and a following sum into a fused
multiply-add (gcc's default ``-ffp-contract=fast`` on targets with FMA), which
rounds once instead of twice; a chain is therefore cut between a ``Mul`` and an
``Add``/``Sub`` that consumes it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Subgraph, SubgraphTransformation

FUSED_OP = "FusedElementwise"
"""The op type of a fused chain (a platform dialect op; its ``steps`` attribute is described in :func:`step_of`)."""

BINARY_KERNELS = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow", "Max": "max", "Min": "min"}
"""ONNX op → the key of ``kernels.loops.BINARY_EXPRESSIONS`` (the same C expressions as the unfused layers)."""

UNARY_OPS = ("Round", "Clip")


def _shape(tensor: gs.Tensor) -> tuple[int, ...] | None:
    shape = tensor.shape
    if shape is None or any(not isinstance(dim, (int, np.integer)) for dim in shape):
        return None
    return tuple(int(dim) for dim in shape)


def _is_float32(tensor: gs.Tensor) -> bool:
    if isinstance(tensor, gs.Constant):
        return np.asarray(tensor.values).dtype == np.float32
    return tensor.dtype is not None and np.dtype(tensor.dtype) == np.float32


def _broadcasts_into(shape: tuple[int, ...], out: tuple[int, ...]) -> bool:
    """Whether ``shape`` numpy-broadcasts to ``out`` without enlarging it."""
    if len(shape) > len(out):
        return False
    return all(dim in (1, want) for dim, want in zip(reversed(shape), reversed(out)))


def running_input(node: gs.Node) -> gs.Tensor | None:
    """The one non-constant input a fusable ``node`` computes on, or None when ``node`` cannot be fused.

    Fusable: float32 Add/Sub/Mul/Div/Pow/Max/Min with one constant operand that broadcasts into the other
    (so the iteration space is the running tensor's own), Round, and Clip with constant or absent bounds;
    the output has the running input's shape.
    """
    if len(node.outputs) != 1 or not _is_float32(node.outputs[0]):
        return None
    out_shape = _shape(node.outputs[0])
    if out_shape is None:
        return None
    if node.op in BINARY_KERNELS:
        if len(node.inputs) != 2:
            return None
        variables = [t for t in node.inputs if not isinstance(t, gs.Constant)]
        constants = [t for t in node.inputs if isinstance(t, gs.Constant)]
        if len(variables) != 1 or len(constants) != 1 or not _is_float32(constants[0]):
            return None
        if not _broadcasts_into(tuple(np.asarray(constants[0].values).shape), out_shape):
            return None
        running = variables[0]
    elif node.op == "Round":
        running = node.inputs[0] if len(node.inputs) == 1 else None
    elif node.op == "Clip":
        if not node.inputs or isinstance(node.inputs[0], gs.Constant):
            return None
        bounds = node.inputs[1:]
        if any(t.name and not (isinstance(t, gs.Constant) and _is_float32(t) and np.asarray(t.values).size == 1)
               for t in bounds):
            return None
        running = node.inputs[0]
    else:
        return None
    if running is None or isinstance(running, gs.Constant) or not _is_float32(running) or _shape(running) != out_shape:
        return None
    return running


def _contractible(previous: gs.Node, following: gs.Node) -> bool:
    """A product followed by a sum of it: the pair a compiler may turn into one fused multiply-add."""
    return previous.op == "Mul" and following.op in ("Add", "Sub")


class FuseElementwiseChains(SubgraphTransformation):
    """Chains of at least two fusable float element-wise nodes → one ``FusedElementwise`` node.

    Each link's output must be read by the next node only (exactly one consumer, not a graph output) and
    be its running input; the chain is as long as that holds (see the module docstring for the cut after
    a ``Mul``).
    """

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        nodes = list(graph.nodes)
        in_graph = {id(node) for node in nodes}
        for node in nodes:
            if running_input(node) is None:
                continue
            chain = [node]
            while True:
                following = _sole_consumer(graph, in_graph, chain[-1])
                if (following is None or running_input(following) is not chain[-1].outputs[0]
                        or sum(t is chain[-1].outputs[0] for t in following.inputs) != 1
                        or _contractible(chain[-1], following)):
                    break
                chain.append(following)
            if len(chain) >= 2:
                yield Subgraph(tuple(chain))

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        return True

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        chain = subgraph.nodes
        first = running_input(chain[0])
        assert first is not None
        inputs: list[gs.Tensor] = [first]
        steps = [step_of(node, inputs) for node in chain]
        fused = gs.Node(FUSED_OP, name=f"{chain[0].name}_fused{len(chain)}", attrs={"steps": steps},
                        inputs=inputs, outputs=[chain[-1].outputs[0]])
        for node in chain:
            node.outputs.clear()
        graph.nodes.append(fused)


def step_of(node: gs.Node, inputs: list[gs.Tensor]) -> str:
    """One link of the chain as text, appending its constant operand to ``inputs`` (the fused node's inputs).

    ``"<kernel> <input> <side>"`` for a binary op (``side`` 0: the running value is the left operand),
    ``"round"``, ``"clip <low> <high>"`` with float32 bounds in ``float.hex`` or ``none``.
    """
    if node.op in BINARY_KERNELS:
        constant = next(t for t in node.inputs if isinstance(t, gs.Constant))
        side = 1 if node.inputs[0] is constant else 0
        index = next((i for i, t in enumerate(inputs) if t is constant), None)
        if index is None:
            inputs.append(constant)
            index = len(inputs) - 1
        return f"{BINARY_KERNELS[node.op]} {index} {side}"
    if node.op == "Round":
        return "round"
    bounds = []
    for position in (1, 2):
        tensor = node.inputs[position] if len(node.inputs) > position else None
        if tensor is None or not tensor.name:
            bounds.append("none")
        else:
            bounds.append(float(np.float32(np.asarray(tensor.values).reshape(-1)[0])).hex())
    return f"clip {bounds[0]} {bounds[1]}"


def _sole_consumer(graph: gs.Graph, in_graph: set[int], node: gs.Node) -> gs.Node | None:
    """The only node in the graph reading ``node``'s output, None if it is a graph output or read by 0 or 2+."""
    tensor = node.outputs[0]
    if any(tensor is output for output in graph.outputs):
        return None
    consumers: list[gs.Node] = []
    for consumer in tensor.outputs:
        if id(consumer) in in_graph and not any(consumer is seen for seen in consumers):
            consumers.append(consumer)
    return consumers[0] if len(consumers) == 1 else None
