"""One round of constant folding done on the ONNX protobuf, with every foldable tensor evaluated in one session.

Shape folding (:mod:`.shape_folding`) alternates inference and folding.
onnx-graphsurgeon's ``fold_constants`` did the folding, but around one
ONNX Runtime session it imports the graph into Python objects, copies it,
walks it a dozen times, cleans it up and exports it again: on a TorchScript
MobileViT (1,155 nodes, most of them size arithmetic) that was four fifths
of a 1.2-second fold.  This round reads the protobuf once:

- ``Constant`` nodes are read (``value``, ``value_int(s)``, ``value_float(s)``);
- ``Shape`` of a tensor whose dimensions inference fixed is its dimensions
  (``start``/``end`` honoured); ``Gather`` and ``Slice`` of a ``Shape`` whose
  input is only partly known fold when they pick known dimensions only;
- every other default-domain node whose inputs are all constant and that the
  caller's policy allows is evaluated by ONNX Runtime, all of them in one
  session that outputs just the tensors the remaining nodes read;
- nodes nothing reads any more and initializers nobody uses are dropped.

The remaining nodes keep the order they had (a topological order stays one
when nodes are removed).  A graph that is not in topological order, holds
subgraphs or local functions is left to onnx-graphsurgeon (the caller's
business): those are rare and its recursion handles them.  When the session
fails (a constant subgraph ONNX Runtime cannot evaluate), the exception
reaches the caller, which falls back to partitioned folding.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import helper, numpy_helper

from deeploy_core.frontend.unknown_shapes import Dims, tensor_dims
from deeploy_core.lowering.static_shape_nodes import shape_node_dims

_DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class FoldCandidate:
    """What a fold policy sees of a node whose inputs are all constant."""

    op: str
    domain: str
    outputs: Sequence[tuple[str, Dims | None, np.dtype | None]]
    """Each output: its name, its inferred dimensions and its element type (None where inference left them open)."""


FoldPolicy = Callable[[FoldCandidate], bool]
"""Answers True for a candidate that must stay a node (called in graph order, so a budget can count down)."""


def can_fold_on_protobuf(graph: onnx.GraphProto, functions: Sequence[onnx.FunctionProto]) -> bool:
    """No subgraphs or local functions, and every node after the producers of its inputs."""
    if functions:
        return False
    available = {value.name for value in graph.input} | {tensor.name for tensor in graph.initializer} | {""}
    graph_types = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    for node in graph.node:
        if any(attribute.type in graph_types for attribute in node.attribute):
            return False
        if any(name not in available for name in node.input):
            return False
        available.update(node.output)
    return True


class _Round:
    """The state of one fold round over an inferred graph."""

    def __init__(self, graph: onnx.GraphProto, policy: FoldPolicy, pinned: Collection[str],
                 dims: dict[str, Dims | None]) -> None:
        self.graph = graph
        self.pinned = pinned
        self.policy = policy
        self.dims = dims
        self.types = _element_types(graph)
        self.initializers = {tensor.name: tensor for tensor in graph.initializer}
        self.known: dict[str, np.ndarray] = {}
        """Values computed here in Python (Constant, Shape and the picks of a Shape)."""
        self.constant: set[str] = set(self.initializers)
        self.shape_sources: dict[str, onnx.NodeProto] = {}
        """Outputs of the Shape nodes left in place, for Gather/Slice of their known dimensions."""
        self.folded: list[int] = []
        self.evaluated: list[onnx.NodeProto] = []
        self.graph_outputs = {value.name for value in graph.output}

    def value(self, name: str) -> np.ndarray | None:
        if name in self.known:
            return self.known[name]
        tensor = self.initializers.get(name)
        if tensor is None:
            return None
        array = numpy_helper.to_array(tensor)
        self.known[name] = array
        return array

    def visit(self, index: int, node: onnx.NodeProto) -> None:
        if node.domain not in _DEFAULT_DOMAINS or any(name in self.graph_outputs or name in self.pinned
                                                      for name in node.output):
            return
        computed = self.computed_here(node)
        if computed is not None:
            self.known[node.output[0]] = computed
            self.constant.add(node.output[0])
            self.folded.append(index)
            return
        if node.op_type == "Shape":
            self.shape_sources[node.output[0]] = node
        if not all(name in self.constant for name in node.input if name):
            return
        candidate = FoldCandidate(node.op_type, node.domain,
                                  [(name, self.dims.get(name), element_dtype(self.types.get(name)))
                                   for name in node.output])
        if self.policy(candidate):
            return
        self.constant.update(name for name in node.output if name)
        self.folded.append(index)
        self.evaluated.append(node)

    def computed_here(self, node: onnx.NodeProto) -> np.ndarray | None:
        """The value of a one-output node Python computes directly, or None."""
        if len(node.output) != 1:
            return None
        if node.op_type == "Constant":
            return _constant_value(node)
        if node.op_type == "Shape" and len(node.input) == 1:
            dims = self.dims.get(node.input[0])
            if dims is None or not all(isinstance(dim, int) for dim in dims):
                return None
            return np.array(shape_node_dims(node, [int(dim) for dim in dims]), dtype=np.int64)
        if node.op_type in ("Gather", "Slice") and node.input and node.input[0] in self.shape_sources:
            return self.picked_dimensions(node)
        return None

    def picked_dimensions(self, node: onnx.NodeProto) -> np.ndarray | None:
        """Gather or Slice of a partly known shape, when every dimension it picks is known."""
        shape_node = self.shape_sources[node.input[0]]
        dims = self.dims.get(shape_node.input[0])
        if dims is None:
            return None
        available = shape_node_dims(shape_node, list(dims))
        positions = np.arange(len(available))
        arguments = [self.value(name) if name else None for name in node.input[1:]]
        if any(argument is None for argument, name in zip(arguments, node.input[1:]) if name):
            return None
        try:
            if node.op_type == "Gather":
                if _int_attribute(node, "axis", 0) != 0 or arguments[0] is None:
                    return None
                picked = np.take(positions, np.asarray(arguments[0], dtype=np.int64))
            else:
                picked = _slice_positions(positions, arguments)
        except (IndexError, ValueError):
            return None  # out of range: ONNX Runtime's error decides (the node stays)
        values = [available[int(position)] for position in np.ravel(picked)]
        if not all(isinstance(value, int) for value in values):
            return None
        return np.array(values, dtype=np.int64).reshape(np.shape(picked))

    def result(self, values: dict[str, np.ndarray]) -> onnx.GraphProto | None:
        """The graph with the folded nodes replaced by initializers, dead nodes removed; None if nothing changed."""
        folded = set(self.folded)
        kept = [node for index, node in enumerate(self.graph.node) if index not in folded]
        live = _live(kept, self.graph_outputs)
        if len(live) >= len(self.graph.node):
            return None
        read = {name for node in live for name in node.input if name} | self.graph_outputs
        result = onnx.GraphProto()
        result.CopyFrom(self.graph)
        del result.node[:]
        result.node.extend(live)
        del result.initializer[:]
        result.initializer.extend(tensor for tensor in self.graph.initializer if tensor.name in read)
        for name in sorted(read & (set(values) | set(self.known)) - set(self.initializers)):
            array = values[name] if name in values else self.known[name]
            result.initializer.append(numpy_helper.from_array(np.asarray(array), name))
        del result.value_info[:]
        return result

    def frontier(self) -> list[str]:
        """Outputs of evaluated nodes that a node left in place reads, in graph order."""
        folded = set(self.folded)
        read = {name for index, node in enumerate(self.graph.node) if index not in folded for name in node.input}
        return [name for node in self.evaluated for name in node.output if name and name in read]


def fold_round(inferred: onnx.ModelProto, policy: FoldPolicy,
               evaluate: Callable[[onnx.ModelProto, list[str]], list[np.ndarray]],
               pinned: Collection[str] = (), dims: dict[str, Dims | None] | None = None) -> onnx.GraphProto | None:
    """Fold ``inferred`` (see the module docstring); None when no node goes.

    ``evaluate`` runs a model of constants and returns the named outputs
    (ONNX Runtime in production); it is called at most once.  Nodes that
    produce a ``pinned`` name (or a graph output) stay whatever they are.
    ``dims``: the graph's :func:`tensor_dims`, when the caller has them.
    """
    state = _Round(inferred.graph, policy, pinned, tensor_dims(inferred.graph) if dims is None else dims)
    for index, node in enumerate(inferred.graph.node):
        state.visit(index, node)
    wanted = state.frontier()
    values: dict[str, np.ndarray] = {}
    if wanted:
        model = _constants_model(inferred, state, wanted)
        values = dict(zip(wanted, evaluate(model, wanted)))
    return state.result(values)


def _constants_model(inferred: onnx.ModelProto, state: _Round, wanted: list[str]) -> onnx.ModelProto:
    """A model of just the evaluated nodes, their constant inputs as initializers, ``wanted`` as outputs."""
    produced = {name for node in state.evaluated for name in node.output}
    needed = sorted({name for node in state.evaluated for name in node.input if name and name not in produced})
    initializers = [state.initializers[name] if name in state.initializers
                    else numpy_helper.from_array(np.asarray(state.known[name]), name) for name in needed]
    outputs = [helper.make_tensor_value_info(name, state.types[name], None) if name in state.types
               else helper.make_empty_tensor_value_info(name) for name in wanted]
    graph = helper.make_graph(list(state.evaluated), "constants", [], outputs, initializer=initializers)
    model = helper.make_model(graph, opset_imports=list(inferred.opset_import))
    model.ir_version = inferred.ir_version
    return model


def _live(nodes: list[onnx.NodeProto], graph_outputs: set[str]) -> list[onnx.NodeProto]:
    """The nodes some graph output depends on, in their order (the graph is topologically ordered)."""
    wanted = set(graph_outputs)
    live: list[onnx.NodeProto] = []
    for node in reversed(nodes):
        if any(name in wanted for name in node.output if name):
            live.append(node)
            wanted.update(name for name in node.input if name)
    live.reverse()
    return live


def _element_types(graph: onnx.GraphProto) -> dict[str, int]:
    types = {tensor.name: tensor.data_type for tensor in graph.initializer}
    for value in (*graph.input, *graph.value_info, *graph.output):
        if value.type.WhichOneof("value") == "tensor_type" and value.type.tensor_type.elem_type:
            types.setdefault(value.name, value.type.tensor_type.elem_type)
    return types


def element_dtype(element_type: int | None) -> np.dtype | None:
    """numpy's type for an ONNX element type; None for strings and types numpy has no equal of."""
    if element_type is None or element_type == onnx.TensorProto.STRING:
        return None
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(element_type))
    except (KeyError, TypeError, ValueError):
        return None


def _constant_value(node: onnx.NodeProto) -> np.ndarray | None:
    """A Constant node's value for the attribute forms numpy holds (strings and sparse values go to ONNX Runtime)."""
    for attribute in node.attribute:
        if attribute.name == "value":
            if attribute.t.data_type == onnx.TensorProto.STRING:
                return None
            return numpy_helper.to_array(attribute.t)
        if attribute.name == "value_int":
            return np.array(attribute.i, dtype=np.int64)
        if attribute.name == "value_ints":
            return np.array(list(attribute.ints), dtype=np.int64)
        if attribute.name == "value_float":
            return np.array(attribute.f, dtype=np.float32)
        if attribute.name == "value_floats":
            return np.array(list(attribute.floats), dtype=np.float32)
    return None


def _int_attribute(node: onnx.NodeProto, name: str, default: int) -> int:
    return next((attribute.i for attribute in node.attribute if attribute.name == name), default)


def _slice_positions(positions: np.ndarray, arguments: list[np.ndarray | None]) -> np.ndarray:
    """ONNX Slice (opset 10+: starts, ends, axes, steps as inputs) of the 1-D ``positions``."""
    if len(arguments) < 2 or arguments[0] is None or arguments[1] is None:
        raise ValueError("Slice without starts and ends")
    starts, ends = (np.ravel(np.asarray(argument, dtype=np.int64)) for argument in arguments[:2])
    axes = np.ravel(np.asarray(arguments[2], dtype=np.int64)) if len(arguments) > 2 and arguments[2] is not None \
        else np.arange(len(starts))
    steps = np.ravel(np.asarray(arguments[3], dtype=np.int64)) if len(arguments) > 3 and arguments[3] is not None \
        else np.ones(len(starts), dtype=np.int64)
    if len(starts) != 1 or len(ends) != 1 or len(axes) != 1 or int(axes[0]) not in (0, -1) or int(steps[0]) == 0:
        raise ValueError("not a slice of one axis")
    return positions[slice(*_clamped(len(positions), int(starts[0]), int(ends[0]), int(steps[0])))]


def _clamped(length: int, start: int, end: int, step: int) -> tuple[int | None, int | None, int]:
    """ONNX's clamping of Slice bounds, as Python slice bounds (huge ends like INT64_MAX stay in range)."""
    def clamp(bound: int, low: int, high: int) -> int:
        bound = bound + length if bound < 0 else bound
        return min(max(bound, low), high)

    if step > 0:
        return clamp(start, 0, length), clamp(end, 0, length), step
    first = clamp(start, -1, length - 1)
    last = clamp(end, -1, length - 1)
    if first < 0:
        return 0, 0, 1  # starts before the first position: selects nothing
    return first, None if last < 0 else last, step
