"""Unrolling ONNX ``Loop`` nodes whose number of iterations is known before run time.

Keras 3 exports a recurrent layer (LSTM, GRU) through tf2onnx as a ``Loop``
over the time steps: a constant trip count (49), a condition computed from
loop counters that start at constants (``i < 49 and time < 49``), the state
and the counters carried from one iteration to the next, the input read by
``Gather`` of the counter, and the outputs of every step collected as a scan
output.  A microcontroller network has a static schedule and static memory,
so such a loop is unrolled before anything else sees it: the body is copied
once per iteration, each copy reads the iteration number and the incoming
condition as constants and the previous copy's carried values, and the
loop's outputs become the last copy's carried values and, for each scan
output, the copies' values stacked along a new first axis (ONNX's Loop
semantics).  The copies are then ordinary nodes: shape inference, constant
folding (the counters, the condition, the ``Gather`` indices) and mapping
treat them like any other.

How many iterations run must be known here.  It is the trip count when the
body passes its condition through (or returns true); otherwise the body's
condition is computed iteration by iteration with onnx's reference
evaluator, which needs it to depend on constants only (the counters).  Even
without a condition input the body's condition stops the loop: ONNX's
pseudo-code would ignore it, but ONNX Runtime, the reference ``validate``
compares with, does not.  A loop that would run more than
:data:`MAX_UNROLLED_NODES` copied nodes, whose condition or trip count
depends on the input data, whose body holds another subgraph, or that runs
no iteration but has scan outputs, is refused in one line naming the node
and the reason (:func:`loop_error`); so is, after inference, an unrolled
loop whose copies have no static shape (:func:`check_unrolled_shapes`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.node_label import node_label
from deeploy_core.frontend.unknown_shapes import is_static, tensor_dims

MAX_UNROLLED_NODES = 50_000
"""The most body nodes one model's unrolled loops may add (a 49-step GRU adds about 1,500)."""


class _NotConstant(Exception):
    """A value the unroller needs is computed from graph inputs (the message says which)."""


def loop_error(node: onnx.NodeProto, index: int, reason: str) -> ModelImportError:
    """The one-line error for a Loop that cannot be unrolled."""
    return ModelImportError(f"{node_label(node, index)}: Loop is supported only with a constant trip count and "
                            f"static shapes ({reason})")


@dataclass
class UnrolledLoop:
    """What one unrolled Loop became: its label for errors and the tensors its copies produce."""

    label: str
    iterations: int
    tensors: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)


class _Names:
    """Unique names for the copies, never clashing with a name the model already uses."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.used: set[str] = set()
        self._collect(model.graph)

    def _collect(self, graph: onnx.GraphProto) -> None:
        self.used.update(value.name for value in (*graph.input, *graph.output, *graph.value_info))
        self.used.update(tensor.name for tensor in graph.initializer)
        for node in graph.node:
            self.used.update(node.output)
            self.used.add(node.name)
            for attribute in node.attribute:
                if attribute.type == onnx.AttributeProto.GRAPH:
                    self._collect(attribute.g)
                for graph_value in attribute.graphs:
                    self._collect(graph_value)

    def fresh(self, wanted: str) -> str:
        name, count = wanted, 1
        while name in self.used:
            name, count = f"{wanted}_{count}", count + 1
        self.used.add(name)
        return name


class _OuterConstants:
    """Values of main-graph tensors computed from initializers and Constant nodes alone (onnx's evaluator)."""

    def __init__(self, model: onnx.ModelProto) -> None:
        self.model = model
        graph = model.graph
        self.initializers = {tensor.name: tensor for tensor in graph.initializer}
        self.inputs = {value.name for value in graph.input} - set(self.initializers)
        self.producer = {name: node for node in graph.node for name in node.output if name}
        self.cache: dict[str, np.ndarray] = {}

    def value(self, name: str) -> np.ndarray:
        """The value of ``name``; raises :class:`_NotConstant` naming the graph input it comes from."""
        if name not in self.cache:
            self.cache[name] = self._evaluate(name)
        return self.cache[name]

    def _evaluate(self, name: str) -> np.ndarray:
        if name in self.initializers:
            return numpy_helper.to_array(self.initializers[name])
        cone: list[onnx.NodeProto] = []
        seen: set[str] = set()
        used_initializers: set[str] = set()
        wanted = [name]
        while wanted:
            current = wanted.pop()
            if current in seen or not current:
                continue
            seen.add(current)
            if current in self.initializers:
                used_initializers.add(current)
                continue
            if current in self.inputs:
                raise _NotConstant(f"it is computed from graph input {current!r}")
            node = self.producer.get(current)
            if node is None:
                raise _NotConstant(f"tensor {current!r} has no producer")
            if any(attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
                   for attribute in node.attribute):
                raise _NotConstant(f"it is computed by the {node.op_type} node {node.name!r}")
            if all(node is not other for other in cone):
                cone.append(node)
            wanted.extend(node.input)
        order = {id(node): index for index, node in enumerate(self.model.graph.node)}
        cone.sort(key=lambda node: order[id(node)])
        graph = helper.make_graph(cone, "constant", [], [helper.make_empty_tensor_value_info(name)],
                                  [self.initializers[item] for item in sorted(used_initializers)])
        return _run(self.model, graph, {})[0]


def _run(model: onnx.ModelProto, graph: onnx.GraphProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Evaluate ``graph`` under ``model``'s opsets with onnx's reference evaluator."""
    evaluated = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    try:
        return [np.asarray(value) for value in ReferenceEvaluator(evaluated).run(None, feeds)]
    except Exception as error:  # noqa: BLE001 - the evaluator raises whatever its op implementations raise
        text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise _NotConstant(f"onnx's evaluator could not compute it: {text}") from error


def _is_true(value: np.ndarray) -> bool:
    return value.size == 1 and bool(value.reshape(()))


@dataclass
class _Loop:
    """A Loop node taken apart (ONNX's input/output layout)."""

    node: onnx.NodeProto
    index: int
    body: onnx.GraphProto

    @property
    def trip_count(self) -> str:
        return self.node.input[0] if len(self.node.input) > 0 else ""

    @property
    def condition(self) -> str:
        return self.node.input[1] if len(self.node.input) > 1 else ""

    @property
    def carried(self) -> list[str]:
        return list(self.node.input[2:])

    @property
    def scan_count(self) -> int:
        return len(self.body.output) - 1 - len(self.carried)

    def error(self, reason: str) -> ModelImportError:
        return loop_error(self.node, self.index, reason)


class _BodyCondition:
    """The body's condition output, computed iteration by iteration from constants (onnx's evaluator).

    The nodes evaluated are those the condition needs, together with the
    carried values those read, transitively (a counter ``time`` is carried and
    read by ``time + 1 < 49``).
    """

    def __init__(self, loop: _Loop, outer: _OuterConstants, model: onnx.ModelProto) -> None:
        body = loop.body
        self.model = model
        inputs = [value.name for value in body.input]
        outputs = [value.name for value in body.output]
        count = len(loop.carried)
        carried_in, carried_out = inputs[2:2 + count], outputs[1:1 + count]
        producer = {name: node for node in body.node for name in node.output if name}
        initializers = {tensor.name: tensor for tensor in body.initializer}
        needed_outputs = [outputs[0]]
        self.carried_positions: list[int] = []
        cone: list[onnx.NodeProto] = []
        outer_names: set[str] = set()
        used_initializers: set[str] = set()
        seen: set[str] = set()
        wanted = [outputs[0]]
        while wanted:
            current = wanted.pop()
            if current in seen or not current:
                continue
            seen.add(current)
            if current in inputs[:2] or current in initializers:
                used_initializers.update([current] if current in initializers else [])
                continue
            if current in carried_in:
                position = carried_in.index(current)
                if position not in self.carried_positions:
                    self.carried_positions.append(position)
                    needed_outputs.append(carried_out[position])
                    wanted.append(carried_out[position])
                continue
            node = producer.get(current)
            if node is None:
                outer_names.add(current)
                continue
            if all(node is not other for other in cone):
                cone.append(node)
            wanted.extend(node.input)
        order = {id(node): index for index, node in enumerate(body.node)}
        cone.sort(key=lambda node: order[id(node)])
        constants = [numpy_helper.from_array(outer.value(name), name) for name in sorted(outer_names)]
        constants += [initializers[name] for name in sorted(used_initializers)]
        graph_inputs = [body.input[0], body.input[1],
                        *(body.input[2 + position] for position in self.carried_positions)]
        self.feeds = [value.name for value in graph_inputs]
        self.graph = helper.make_graph(cone, "condition", list(graph_inputs),
                                       [helper.make_empty_tensor_value_info(name) for name in needed_outputs],
                                       constants)
        for value in self.graph.input:  # fed whatever shape the constants have
            value.type.tensor_type.ClearField("shape")
        self.carried = [outer.value(loop.carried[position]) for position in self.carried_positions]

    def next(self, iteration: int, condition: bool) -> bool:
        """The condition after running iteration ``iteration`` (which started with ``condition``)."""
        feeds = {self.feeds[0]: np.array(iteration, np.int64), self.feeds[1]: np.array(condition, np.bool_)}
        feeds.update(zip(self.feeds[2:], self.carried))
        results = _run(self.model, self.graph, feeds)
        self.carried = results[1:]
        return _is_true(results[0])


def _passes_condition_through(body: onnx.GraphProto) -> bool:
    """The body's condition output is its condition input, directly, through Identity, or a true constant."""
    name = body.output[0].name
    producer = {output: node for node in body.node for output in node.output if output}
    while name in producer and producer[name].op_type == "Identity":
        name = producer[name].input[0]
    if name == body.input[1].name:
        return True
    initializers = {tensor.name: tensor for tensor in body.initializer}
    if name in initializers:
        return _is_true(numpy_helper.to_array(initializers[name]))
    node = producer.get(name)
    if node is not None and node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
        return _is_true(numpy_helper.to_array(node.attribute[0].t))
    return False


def _iterations(loop: _Loop, outer: _OuterConstants, model: onnx.ModelProto, budget: int) -> list[bool]:
    """The condition each iteration starts with, one entry per iteration that runs."""
    limit = budget // max(1, len(loop.body.node))
    trip: int | None = None
    if loop.trip_count:
        try:
            value = outer.value(loop.trip_count)
        except _NotConstant as why:
            raise loop.error(f"the trip count {loop.trip_count!r} is not a constant: {why}") from None
        trip = max(0, int(value.reshape(())))
    condition = True
    if loop.condition:
        try:
            condition = _is_true(outer.value(loop.condition))
        except _NotConstant as why:
            raise loop.error(f"the condition {loop.condition!r} is not a constant: {why}") from None
    # Without a condition input, ONNX's pseudo-code ignores the body's condition output; ONNX Runtime (validate's
    # reference) stops when it turns false, and so do the copies.
    fixed_condition = _passes_condition_through(loop.body)
    if trip is None and condition and fixed_condition:
        raise loop.error("no trip count and a condition that never turns false: it would never end")
    if fixed_condition:
        count = trip if condition and trip is not None else 0
        if count > limit:
            raise loop.error(f"{count} iterations of {len(loop.body.node)} body nodes are more than the "
                             f"{MAX_UNROLLED_NODES} nodes unrolling may add")
        return [True] * count
    try:
        evaluator = _BodyCondition(loop, outer, model)
    except _NotConstant as why:
        raise loop.error(f"the body's condition is not computed from constants: {why}") from None
    starts: list[bool] = []
    while condition and (trip is None or len(starts) < trip):
        if len(starts) >= limit:
            raise loop.error(f"more than {limit} iterations of {len(loop.body.node)} body nodes: more than the "
                             f"{MAX_UNROLLED_NODES} nodes unrolling may add")
        starts.append(condition)
        if trip is not None and len(starts) == trip:
            break  # the condition after the last iteration is never read
        try:
            condition = evaluator.next(len(starts) - 1, condition)
        except _NotConstant as why:
            raise loop.error(f"the body's condition is not computed from constants: {why}") from None
    return starts


def _unsqueeze(opset: int, data: str, output: str, name: str, axes_name: str) -> tuple[onnx.NodeProto,
                                                                                          TensorProto | None]:
    """``Unsqueeze(data, axes=[0])`` in the form ``opset`` defines (axes an input from opset 13)."""
    if opset >= 13:
        return (helper.make_node("Unsqueeze", [data, axes_name], [output], name=name),
                numpy_helper.from_array(np.array([0], np.int64), axes_name))
    return helper.make_node("Unsqueeze", [data], [output], name=name, axes=[0]), None


def _unroll(loop: _Loop, starts: list[bool], names: _Names, opset: int) -> tuple[list[onnx.NodeProto],
                                                                                  list[TensorProto], UnrolledLoop]:
    """The nodes and initializers that replace ``loop`` when it runs ``len(starts)`` iterations."""
    body, node = loop.body, loop.node
    prefix = node.name or f"Loop_{loop.index}"
    unrolled = UnrolledLoop(node_label(node, loop.index), len(starts))
    nodes: list[onnx.NodeProto] = []
    initializers: list[TensorProto] = []
    local: dict[str, str] = {}
    for tensor in body.initializer:  # constants of the body: one copy for all iterations
        copied = TensorProto()
        copied.CopyFrom(tensor)
        copied.name = names.fresh(f"{prefix}/{tensor.name}")
        local[tensor.name] = copied.name
        initializers.append(copied)
    carried = list(loop.carried)
    inputs = [value.name for value in body.input]
    outputs = [value.name for value in body.output]
    scans: list[list[str]] = [[] for _ in range(loop.scan_count)]
    read = {name for item in body.node for name in item.input} | set(outputs)
    for iteration, condition in enumerate(starts):
        scope = dict(local)
        for name, bound in zip(inputs[:2], (np.array(iteration, np.int64), np.array(condition, np.bool_))):
            if name in read:  # the iteration number and the incoming condition: constants of this copy
                constant = numpy_helper.from_array(bound, names.fresh(f"{prefix}/iter{iteration}/{name}"))
                initializers.append(constant)
                scope[name] = constant.name
        scope.update(zip(inputs[2:], carried))
        for index, item in enumerate(body.node):
            copied = onnx.NodeProto()
            copied.CopyFrom(item)
            copied.name = names.fresh(f"{prefix}/iter{iteration}/{item.name or f'{item.op_type}_{index}'}")
            unrolled.nodes.append(copied.name)
            copied.input[:] = [scope.get(name, name) for name in item.input]
            for position, name in enumerate(item.output):
                if name:
                    scope[name] = names.fresh(f"{prefix}/iter{iteration}/{name}")
                    copied.output[position] = scope[name]
                    unrolled.tensors.append(scope[name])
            nodes.append(copied)
        carried = [scope.get(name, name) for name in outputs[1:1 + len(carried)]]
        for scan, name in zip(scans, outputs[1 + len(carried):]):
            scan.append(scope.get(name, name))
    for name, value in zip(node.output, carried):
        if name:
            nodes.append(helper.make_node("Identity", [value], [name], name=names.fresh(f"{prefix}/{name}")))
            unrolled.nodes.append(nodes[-1].name)
    for position, (name, values) in enumerate(zip(node.output[len(carried):], scans)):
        if not name:
            continue
        stacked = []
        axes_name = names.fresh(f"{prefix}/scan{position}/axes")
        for iteration, value in enumerate(values):
            output = names.fresh(f"{prefix}/iter{iteration}/scan{position}")
            unsqueeze, axes = _unsqueeze(opset, value, output, names.fresh(f"{output}/Unsqueeze"), axes_name)
            if axes is not None and iteration == 0:
                initializers.append(axes)
            nodes.append(unsqueeze)
            unrolled.nodes.append(unsqueeze.name)
            stacked.append(output)
            unrolled.tensors.append(output)
        nodes.append(helper.make_node("Concat", stacked, [name], name=names.fresh(f"{prefix}/scan{position}"),
                                      axis=0))
        unrolled.nodes.append(nodes[-1].name)
    return nodes, initializers, unrolled


def _check_body(loop: _Loop) -> None:
    if len(loop.body.input) != 2 + len(loop.carried) or loop.scan_count < 0:
        raise loop.error(f"its body has {len(loop.body.input)} inputs and {len(loop.body.output)} outputs for "
                         f"{len(loop.carried)} carried values")
    for item in loop.body.node:
        if any(attribute.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for attribute in item.attribute):
            raise loop.error(f"its body holds a {item.op_type} node with a subgraph of its own")
    if len(loop.node.output) > len(loop.carried) + loop.scan_count:
        raise loop.error("it has more outputs than carried values and scan outputs")


def unroll_loops(model: onnx.ModelProto, opset: int) -> list[UnrolledLoop]:
    """Replace every Loop of the main graph by its unrolled copies (in place); one record per Loop unrolled.

    ``opset`` is the model's default-domain opset (the nodes added are written
    in it).  Raises the Loop's one-line error when it cannot be unrolled.
    """
    graph = model.graph
    loops = [index for index, node in enumerate(graph.node)
             if node.op_type == "Loop" and node.domain in ("", "ai.onnx")]
    if not loops:
        return []
    names = _Names(model)
    outer = _OuterConstants(model)
    budget = MAX_UNROLLED_NODES
    replaced: dict[int, list[onnx.NodeProto]] = {}
    records: list[UnrolledLoop] = []
    for index in loops:
        node = graph.node[index]
        body = next((attribute.g for attribute in node.attribute if attribute.name == "body"), None)
        if body is None:
            raise loop_error(node, index, "it has no body")
        loop = _Loop(node, index, body)
        _check_body(loop)
        starts = _iterations(loop, outer, model, budget)
        if not starts and loop.scan_count and any(node.output[len(loop.carried):]):
            raise loop.error("it runs no iteration, so its scan outputs are empty")
        budget -= len(starts) * len(body.node)
        nodes, initializers, record = _unroll(loop, starts, names, opset)
        replaced[index] = nodes
        graph.initializer.extend(initializers)
        records.append(record)
    kept = [item for index, node in enumerate(graph.node) for item in replaced.get(index, [node])]
    del graph.node[:]
    graph.node.extend(kept)
    return records


def check_unrolled_shapes(model: onnx.ModelProto, loops: Iterable[UnrolledLoop]) -> None:
    """Refuse, as a Loop error, an unrolled loop whose copies left some tensor without a static shape."""
    dims = tensor_dims(model.graph)
    for loop in loops:
        for name in loop.tensors:
            if name in dims and not is_static(dims[name]):
                raise ModelImportError(
                    f"{loop.label}: Loop is supported only with a constant trip count and static shapes (unrolled "
                    f"{loop.iterations} times, its tensor {name!r} has no static shape: {dims[name]})")


def blame_loop(error: ModelImportError, loops: Iterable[UnrolledLoop]) -> ModelImportError:
    """``error`` (strict inference failed) as the Loop's error when it names one of an unrolled loop's copies."""
    text = str(error)
    for loop in loops:
        if any(f"'{name}'" in text for name in (*loop.nodes, *loop.tensors)):
            return ModelImportError(f"{loop.label}: Loop is supported only with a constant trip count and static "
                                    f"shapes (unrolled {loop.iterations} times: {text})")
    return error
