"""Folding the shape arithmetic that PyTorch's exporters write, so every tensor gets a static shape.

TorchScript exports compute shapes at run time even when every input is
fixed: ``Shape → Gather → Unsqueeze → Concat → Reshape`` for a channel
shuffle, ``ConstantOfShape``/``Equal``/``Where`` to turn ``expand(-1, …)``
into a target shape, ``Range``, ``Mod``, ``Cast`` of sizes.  onnx's data
propagation follows only some of these ops (not ``Div``, ``Where``,
``Mod``, ``Range``), so strict inference leaves names like ``unk__2`` and
the compile stopped at the first such tensor.  Lowering folds constants too,
but only after the shapes were settled.

Here the two libraries take turns until nothing changes: onnx's inference
(with data propagation) gives the graph the shapes it can, then
onnx-graphsurgeon folds ``Shape`` of statically shaped tensors and evaluates
every subgraph of constants with ONNX Runtime.  Each fold can make more
shapes static, which makes more ``Shape`` nodes foldable.  A model whose
shapes are all static already is returned untouched, so the common case
costs one inference.

Some nodes are never folded here.  A later stage needs them as they are:
quantise/dequantise nodes (the QDQ rewrites in lowering look for them on
weights), nodes of other domains (the parked declared ops and dialect
proxies the importer restores afterwards), random generators, nodes that
produce graph outputs.  Others are too big to evaluate before the sizes are
checked: nodes whose result would be larger than
:data:`FOLD_LIMIT_BYTES` or of unknown size (a shape-producing op is folded
once its size is known, in a later round), or would take the model's folds
past :data:`FOLD_BUDGET_BYTES`.  Folding thus allocates no more than that
before the importer checks declared and inferred sizes.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import onnx
import onnx_graphsurgeon as gs
from onnx import shape_inference

from deeploy_core.frontend.constant_compress import compress_to_gather
from deeploy_core.frontend.constant_round import FoldCandidate, can_fold_on_protobuf, fold_round
from deeploy_core.frontend.declared_ops import DeclaredNodes, infer_with_declarations
from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.fold_candidates import may_fold
from deeploy_core.frontend.unknown_shapes import Dims, is_static, tensor_dims
from deeploy_core.lowering.static_shape_nodes import fold_static_shape_nodes

FOLD_LIMIT_BYTES = 16 << 20
"""The largest tensor folded in the front end; larger constant subgraphs are left to lowering."""

FOLD_BUDGET_BYTES = 64 << 20
"""What all tensors folded for one model may hold together: folding runs before the importer's size checks
(:mod:`.tensor_limits`), so a model with many large constant subgraphs cannot exhaust the host's memory here."""

KEPT_OPS = frozenset({
    "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
    "RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli",
})
"""Ops left in place even when their inputs are constants (see the module docstring)."""

_DEFAULT_DOMAINS = ("", "ai.onnx")


def _lenient(model: onnx.ModelProto) -> onnx.ModelProto:
    """Lenient inference with data propagation: as many shapes as onnx can give; strict inference comes later."""
    return shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)


def _infer(model: onnx.ModelProto, declared: DeclaredNodes) -> onnx.ModelProto:
    """Shapes for a fold round, the parked declared ops' outputs included once their inputs are shaped.

    A declared op whose input still waits for a fold leaves its outputs
    unshaped this round; a later round, after that fold, shapes them.
    """
    del model.graph.value_info[:]
    if declared.schemas:
        try:
            return infer_with_declarations(model, declared, _lenient)[0]
        except ModelImportError:
            del model.graph.value_info[:]
    return _lenient(model)


def _unshaped_outputs(graph: onnx.GraphProto, dims: dict[str, Dims | None]) -> bool:
    """Some output of a default-domain node has no static shape (``dims``: the graph's :func:`tensor_dims`)."""
    return any(name and not is_static(dims.get(name))
               for node in graph.node if node.domain in _DEFAULT_DOMAINS for name in node.output)


def _byte_size(dims: Dims | None, dtype: np.dtype | None) -> int | None:
    if not is_static(dims) or dtype is None:
        return None
    return math.prod(int(dim) for dim in dims or []) * np.dtype(dtype).itemsize


@dataclass
class _Budget:
    """Bytes that folds of one model may still produce (see :data:`FOLD_BUDGET_BYTES`)."""

    left: int = FOLD_BUDGET_BYTES


class _Exclusion:
    """Which otherwise foldable nodes stay (see the module docstring); the policy of both fold paths."""

    def __init__(self, kept_outputs: Collection[str], graph_outputs: Collection[str], budget: _Budget) -> None:
        self.kept_outputs = kept_outputs
        self.graph_outputs = graph_outputs
        self.budget = budget

    def __call__(self, candidate: FoldCandidate) -> bool:
        if candidate.op in KEPT_OPS or (candidate.domain or "") not in _DEFAULT_DOMAINS:
            return True
        total = 0
        for name, dims, dtype in candidate.outputs:
            if name in self.kept_outputs or name in self.graph_outputs:
                return True
            size = _byte_size(dims, dtype)
            if size is None or size > FOLD_LIMIT_BYTES:
                return True
            total += size
        if total > self.budget.left:
            return True
        self.budget.left -= total
        return False


class _GraphsurgeonExclusion:
    """The policy as onnx-graphsurgeon's ``should_exclude_node`` (it passes its own node objects)."""

    def __init__(self, policy: _Exclusion, dims: dict[str, Dims | None]) -> None:
        self.policy = policy
        self.dims = dims

    def __call__(self, node: gs.Node) -> bool:
        outputs = [(tensor.name, self.dims.get(tensor.name), None if tensor.dtype is None else np.dtype(tensor.dtype))
                   for tensor in node.outputs]
        return self.policy(FoldCandidate(node.op, node.domain or "", outputs))


def _fold_once(inferred: onnx.ModelProto, dims: dict[str, Dims | None], kept_outputs: Collection[str],
               budget: _Budget) -> onnx.GraphProto | None:
    """One fold of an inferred model; the folded graph, or None when nothing was folded.

    A flat graph in topological order (what exporters write) is folded on
    the protobuf, every foldable tensor evaluated in one ONNX Runtime session
    (:mod:`.constant_round`).  Graphs with subgraphs or local functions go to
    onnx-graphsurgeon, also in one session.  Only when that session fails (a
    constant subgraph it cannot evaluate) does onnx-graphsurgeon partition
    the graph: ``recursive`` partitioning peels the failing node off and
    folds the rest, at the price of a graph copy and a session per folded
    node.  The fallback starts again from the inferred model with the budget
    as it was.
    """
    left = budget.left
    policy = _Exclusion(kept_outputs, {value.name for value in inferred.graph.output}, budget)
    with _runtime_silenced():
        try:
            if can_fold_on_protobuf(inferred.graph, inferred.functions):
                return fold_round(inferred, policy, _evaluate, pinned=kept_outputs, dims=dims)
            return _fold_with(inferred, policy, partitioning=None)
        except Exception:  # noqa: BLE001 - some constant subgraph ONNX Runtime cannot evaluate: fold the others
            budget.left = left
            return _fold_with(inferred, policy, partitioning="recursive")


def _evaluate(model: onnx.ModelProto, outputs: list[str]) -> list[np.ndarray]:
    """The named outputs of a model of constants, from one ONNX Runtime session."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return [np.asarray(value) for value in session.run(outputs, {})]


_RUNTIME_DEFAULT_SEVERITY = 2
"""ONNX Runtime's default log severity (warnings), restored after folding."""


@contextmanager
def _runtime_silenced() -> Iterator[None]:
    """ONNX Runtime silent while it evaluates constants: onnx-graphsurgeon opens the sessions with default options,
    and the optimiser's notes on a graph of constants (an ``Unsqueeze`` of a shared initializer left in place) or
    the error of a subgraph it cannot evaluate (which folding handles: the node stays) would reach the user's
    terminal about nothing they can act on."""
    import onnxruntime  # here: importing it costs a compile that folds nothing a fifth of a second

    onnxruntime.set_default_logger_severity(4)
    try:
        yield
    finally:
        onnxruntime.set_default_logger_severity(_RUNTIME_DEFAULT_SEVERITY)


def _fold_with(inferred: onnx.ModelProto, policy: _Exclusion, partitioning: str | None) -> onnx.GraphProto | None:
    """Fold with onnx-graphsurgeon; ``partitioning=None`` raises instead of skipping what it cannot evaluate."""
    graph = gs.import_onnx(inferred)
    before = len(graph.nodes)
    exclude = _GraphsurgeonExclusion(policy, tensor_dims(inferred.graph))
    nested = _has_subgraphs(inferred.graph)
    order = None if nested or inferred.functions else _level_order(inferred.graph)
    if order is None:
        graph.toposort(recurse_subgraphs=nested)
    elif order != sorted(order):
        graph.nodes = [graph.nodes[index] for index in order]
    fold_static_shape_nodes(graph)  # graphsurgeon's shape folding would ignore Shape's start/end
    graph.fold_constants(fold_shapes=True, partitioning=partitioning, error_ok=partitioning is not None,
                         size_threshold=FOLD_LIMIT_BYTES, should_exclude_node=exclude, recurse_subgraphs=nested)
    graph.cleanup(remove_unused_graph_inputs=False, recurse_subgraphs=nested).toposort(recurse_subgraphs=nested)
    if len(graph.nodes) >= before:
        return None
    return gs.export_onnx(graph, do_type_check=False).graph


def _has_subgraphs(graph: onnx.GraphProto) -> bool:
    """Some node carries a graph attribute (If, Loop, Scan).

    Without one, onnx-graphsurgeon's recursion into subgraphs finds nothing
    to sort, fold or clean, yet asks every node for its subgraphs on each of
    its many walks; turning it off changes nothing in the result.
    """
    graph_types = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
    return any(attribute.type in graph_types for node in graph.node for attribute in node.attribute)


def _level_order(graph: onnx.GraphProto) -> list[int] | None:
    """The node order onnx-graphsurgeon's ``toposort`` would give, as indices into ``graph.node``.

    Its walk over the graph objects costs more than the whole fold of a
    small round, and the first round's graph (the exporter's order) always
    needs it.  graphsurgeon gives each node a level (none of its inputs
    produced in the graph: 0; else one more than its highest producer),
    records nodes as its depth-first walk over producers finishes them,
    from each node in list order, and sorts that record stably by level.
    This does the same on the protobuf.  A name produced twice (the empty
    name of omitted optional outputs, say) or a cycle is left to
    graphsurgeon (None).
    """
    produced = [name for node in graph.node for name in node.output]
    if len(set(produced)) != len(produced) or "" in produced:
        return None
    producer = {name: index for index, node in enumerate(graph.node) for name in node.output}
    producers = [list(dict.fromkeys(producer[name] for name in node.input if name in producer)) for node in graph.node]
    levels: dict[int, int] = {}
    finished: list[int] = []
    for start in range(len(producers)):
        if start in levels:
            continue
        on_path = {start}
        stack = [(start, iter(producers[start]))]
        while stack:
            index, pending = stack[-1]
            following = next((candidate for candidate in pending if candidate not in levels), None)
            if following is None:
                stack.pop()
                on_path.discard(index)
                levels[index] = max((levels[source] + 1 for source in producers[index]), default=0)
                finished.append(index)
            elif following in on_path:
                return None  # a cycle: graphsurgeon names it
            else:
                on_path.add(following)
                stack.append((following, iter(producers[following])))
    return sorted(finished, key=levels.__getitem__)


def fold_shape_arithmetic(model: onnx.ModelProto, kept_outputs: Collection[str] = (),
                          declared: DeclaredNodes | None = None) -> int:
    """Fold constant subgraphs of ``model`` (in place) when inference leaves some shape unknown.

    Rounds of inference and folding repeat until a round folds nothing, so
    a chain whose shapes only become known after an earlier fold (``Range``
    of a folded size, ``Expand`` to a folded shape) goes too.  ``kept_outputs``
    names outputs of nodes that must stay (the importer's proxies of dialect
    ops); ``declared`` holds the parked schema-less ops, whose declarations
    shape their outputs so that shape arithmetic after them folds too.  Returns the number of nodes removed.  The model keeps its opset
    imports, IR version and metadata; only its graph changes.
    """
    removed = 0
    declared = declared or DeclaredNodes()
    budget = _Budget()
    try:
        inferred = _infer(_copy(model), declared)
    except Exception:  # noqa: BLE001 - a model onnx cannot infer is judged by strict inference next
        return removed
    dims = tensor_dims(inferred.graph)
    if not _unshaped_outputs(inferred.graph, dims):
        return removed
    for _ in range(len(model.graph.node) + 1):  # every productive round removes a node
        if compress_to_gather(model, inferred.graph):  # a constant condition decides the length (see the module)
            try:
                inferred = _infer(_copy(model), declared)
            except Exception:  # noqa: BLE001 - as above
                return removed
            dims = tensor_dims(inferred.graph)
            if not _unshaped_outputs(inferred.graph, dims):
                return removed
        before = len(model.graph.node)
        try:
            graph = _fold_once(inferred, dims, kept_outputs, budget)
        except Exception:  # noqa: BLE001 - a model ONNX Runtime cannot evaluate is judged by strict inference next
            return removed
        if graph is None:
            return removed
        _replace_graph(model, graph)
        removed += before - len(model.graph.node)
        try:
            inferred = _infer(_copy(model), declared)
        except Exception:  # noqa: BLE001 - as above
            return removed
        dims = tensor_dims(inferred.graph)
        if not may_fold(inferred.graph, KEPT_OPS, dims):
            if not compress_to_gather(model, inferred.graph):
                return removed  # the next round would fold nothing (and cost as much as a productive one)
            try:
                inferred = _infer(_copy(model), declared)
            except Exception:  # noqa: BLE001 - as above
                return removed
            dims = tensor_dims(inferred.graph)
    return removed


def _replace_graph(model: onnx.ModelProto, graph: onnx.GraphProto) -> None:
    """Put the folded graph in, with the inputs and outputs typed as the model declared them.

    onnx-graphsurgeon writes back what inference made of them; the importer
    compares declared output shapes with inferred ones later and must still
    see what the model said.
    """
    declared = {value.name: value for value in (*model.graph.input, *model.graph.output)}
    model.graph.CopyFrom(graph)
    del model.graph.value_info[:]
    for value in (*model.graph.input, *model.graph.output):
        if value.name in declared:
            value.CopyFrom(declared[value.name])


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    copied = onnx.ModelProto()
    copied.CopyFrom(model)
    return copied

