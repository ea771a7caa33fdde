"""Removing the layout copies the channels-last rewrite introduced, without changing any result.

Three rewrites, repeated until none applies:

* **fold**: ``Transpose(p2)`` reading ``Transpose(p1)`` becomes one ``Transpose(p1∘p2)`` of the first's
  input; when that is the identity both vanish (the tensors merge, :func:`~.graph_edits.merge_same`);
  a ``Reshape`` of a ``Reshape`` reads the first's input, and a ``Reshape`` to its input's own shape vanishes;
* **alias**: a Transpose that only moves size-1 axes copies nothing: it becomes a Reshape (an alias in the
  generated C), e.g. tf2onnx's ``[1,49,10,1] -> [1,1,49,10]`` input or a global pool's ``[1,1,1,C]`` output;
* **push**: a layout-agnostic element-wise node (:data:`ELEMENTWISE`: same-shape activations, scalar
  parameters) whose activations all come out of Transposes of one permutation runs on their inputs
  instead, and one Transpose after it restores its output; that transpose then meets the next
  channels-last layer's and folds away, so residual Adds and activation chains stay NHWC.

TFLite's MEAN of a Transpose to NCHW reads the NHWC tensor instead (its ``channels_last`` attribute).
A Transpose left at the end is a real layer generic C runs.  Graph outputs keep their names and values.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Modifies, Pass

from deeploy_cortex_m.layout.graph_edits import TO_NCHW, TO_NHWC, fresh, merge_same, permuted, producer, reshape, transpose

ELEMENTWISE = {
    ("com.microsoft", "QLinearAdd"): (0, 3), ("com.microsoft", "QLinearMul"): (0, 3),
    ("com.microsoft", "QLinearLeakyRelu"): (0,), ("com.microsoft", "QLinearSigmoid"): (0,),
    ("", "Relu"): (0,), ("", "Clip"): (0,), ("", "Add"): (0, 1), ("", "Mul"): (0, 1), ("", "Sub"): (0, 1),
    ("", "QuantizeLinear"): (0,), ("", "DequantizeLinear"): (0,),
}
"""(domain, op) -> the inputs that are activations; every other input must be a scalar constant (or absent)."""


def _perm(node: gs.Node) -> list[int]:
    """The Transpose's permutation; without ``perm``, ONNX reverses the axes."""
    if "perm" in node.attrs:
        return [int(axis) for axis in node.attrs["perm"]]
    shape = node.inputs[0].shape
    if shape is None:
        raise ValueError(f"Transpose {node.name!r} has no perm and an input of unknown rank")
    return list(reversed(range(len(shape))))


def _fold(graph: gs.Graph, node: gs.Node) -> bool:
    first = producer(node.inputs[0])
    if node.op == "Transpose" and first is not None and first.op == "Transpose":
        p1, p2 = _perm(first), _perm(node)
        combined = [p1[axis] for axis in p2]
        if combined == list(range(len(combined))):
            return merge_same(graph, node.outputs[0], first.inputs[0], node)
        node.inputs[0] = first.inputs[0]
        node.attrs["perm"] = combined
        return True
    static = node.outputs[0].shape is not None and all(isinstance(d, int) for d in node.outputs[0].shape)
    if node.op == "Reshape" and first is not None and first.op == "Reshape" and static:
        node.inputs[0] = first.inputs[0]
        node.inputs[1] = gs.Constant(f"{node.outputs[0].name}_shape", np.asarray(node.outputs[0].shape, np.int64))
        return True
    if node.op == "Reshape" and list(node.inputs[0].shape or []) == list(node.outputs[0].shape or [None]):
        return merge_same(graph, node.outputs[0], node.inputs[0], node)
    return False


def _alias(graph: gs.Graph, node: gs.Node) -> bool:
    if node.op != "Transpose" or node.inputs[0].shape is None:
        return False
    shape = list(node.inputs[0].shape)
    moved = [axis for axis in _perm(node) if shape[axis] != 1]
    if moved != sorted(moved):
        return False
    source, target = node.inputs[0], node.outputs[0]
    node.inputs.clear()
    node.outputs.clear()
    reshape(graph, source, target)
    return True


def _push(graph: gs.Graph, node: gs.Node) -> bool:
    domain = node.domain or ""
    activations = ELEMENTWISE.get(("" if domain == "ai.onnx" else domain, node.op))
    if activations is None or len(node.outputs) != 1:
        return False
    sources = [producer(node.inputs[i]) for i in activations]
    if any(s is None or s.op != "Transpose" or {id(n) for n in s.outputs[0].outputs} != {id(node)}
           for s in sources):
        return False  # a transpose another layer still reads would stay: pushing would add a copy
    perms = [_perm(s) for s in sources if s is not None]
    shapes = [list(node.inputs[i].shape or []) for i in activations]
    if any(p != perms[0] for p in perms) or any(s != list(node.outputs[0].shape or []) for s in shapes):
        return False
    others = [t for i, t in enumerate(node.inputs) if i not in activations and t.name]
    if any(not isinstance(t, gs.Constant) or np.asarray(t.values).size != 1 for t in others):
        return False
    if any(key in node.attrs for key in ("axis", "channels_last")) and node.op not in ("QuantizeLinear",
                                                                                     "DequantizeLinear"):
        return False
    inverse = [perms[0].index(axis) for axis in range(len(perms[0]))]
    output = node.outputs[0]
    inner = fresh(graph, output.name, output.dtype, permuted(output.shape, inverse))
    for index, source in zip(activations, sources):
        assert source is not None
        node.inputs[index] = source.inputs[0]
    node.outputs[0] = inner
    transpose(graph, inner, perms[0], target=output)
    return True


def _mean_channels_last(graph: gs.Graph, node: gs.Node) -> bool:
    """TFLite's MEAN (QLinearGlobalAveragePool) of a Transpose to NCHW reads the NHWC tensor (``channels_last=1``)."""
    if node.op != "QLinearGlobalAveragePool" or int(node.attrs.get("channels_last", 0)):
        return False
    source = producer(node.inputs[0])
    if source is None or source.op != "Transpose" or _perm(source) != list(TO_NCHW):
        return False
    output = node.outputs[0]
    if output.shape is None or len(output.shape) != 4:
        return False
    inner = fresh(graph, output.name, output.dtype, permuted(output.shape, TO_NHWC))
    node.inputs[0] = source.inputs[0]
    node.attrs["channels_last"] = 1
    node.outputs[0] = inner
    transpose(graph, inner, TO_NCHW, target=output)
    return True


class CancelTransposes(Pass[gs.Graph]):
    """Fold, alias and push Transposes until none of the three applies (see the module's docstring)."""

    def modifies(self) -> Modifies:
        return Modifies.Everything

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int:
        changes = 0
        while self._once(graph):
            changes += 1
            graph.cleanup(remove_unused_graph_inputs=False).toposort()
        return changes

    @staticmethod
    def _once(graph: gs.Graph) -> bool:
        """One rewrite: folds and aliases first (they free transposes' other readers), pushes only then."""
        for rewrite in ((_fold, _alias), (_push, _mean_channels_last)):
            for node in list(graph.nodes):
                if node.outputs and any(step(graph, node) for step in rewrite):
                    return True
        return False

    def report(self, result: Any) -> str | None:
        return f"{result} layout rewrite(s) cancelling transposes" if result else None
