"""Fully connected weights in CMSIS-NN's layout: one row of K weights per output, transposed at compile time.

tf2onnx writes TFLite's FullyConnected as ``MatMul(x, W)`` with W stored
[K, N] (fused into QGemm with ``transB=0``, or QLinearMatMul without a bias),
while ``arm_fully_connected_*_s8`` reads W as [N, K], each output's weights
contiguous.  This pass stores the transposed constant instead and says so with
``transB=1``: the graph computes the same function, the weights cost the same
flash (no second copy) and ``report.json`` counts them as weights.  A
QLinearMatMul with a constant B becomes the QGemm it equals (no bias input),
because QLinearMatMul cannot say that B is transposed.  Generic C runs either
form, so a layer CMSIS-NN then declines still computes the same outputs.

Only fixed-point mode's nodes (``requantization="tflite"``: CMSIS-NN's
arithmetic) with a 2-D int8 constant B that no other node reads are rewritten.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Modifies, Pass

MICROSOFT = "com.microsoft"
"""The domain of QGemm."""


def _own_int8_matrix(tensor: gs.Tensor) -> bool:
    """A 2-D int8 constant read by one node only (transposing it cannot change another layer)."""
    return (isinstance(tensor, gs.Constant) and np.asarray(tensor.values).dtype == np.int8
            and np.asarray(tensor.values).ndim == 2 and len(tensor.outputs) == 1)


def _transposed(tensor: gs.Constant) -> gs.Constant:
    """The [N, K] copy of a [K, N] constant, under a name derived from the original's."""
    return gs.Constant(f"{tensor.name}_cmsis_nk", np.ascontiguousarray(np.asarray(tensor.values).T))


def _fully_connected(node: gs.Node) -> bool:
    """QGemm (transB=0) or QLinearMatMul of fixed-point mode whose B is a weight matrix of this node only."""
    if node.attrs.get("requantization") != "tflite":
        return False
    if node.op == "QGemm" and node.domain == MICROSOFT:
        return not int(node.attrs.get("transB", 0)) and len(node.inputs) > 3 and _own_int8_matrix(node.inputs[3])
    return node.op == "QLinearMatMul" and len(node.inputs) == 8 and _own_int8_matrix(node.inputs[3])


class FullyConnectedWeightsRowMajor(Pass[gs.Graph]):
    """Fixed-point FullyConnected layers get their weights as [N, K] (``transB=1``), CMSIS-NN's layout."""

    def modifies(self) -> Modifies:
        return Modifies.Edges

    def apply_pass(self, graph: gs.Graph, pipeline_results: dict[str, Any]) -> int | None:
        rewritten = 0
        for node in graph.nodes:
            if not _fully_connected(node):
                continue
            weights = _transposed(node.inputs[3])
            if node.op == "QLinearMatMul":
                # QGemm's inputs: A, its scale and zero point, B, its scale and zero point, C (absent), Y's scale and
                # zero point; QLinearMatMul has the same without C.
                inputs = [*node.inputs[:3], weights, *node.inputs[4:6], gs.Variable.empty(), *node.inputs[6:]]
                node.op, node.domain = "QGemm", MICROSOFT
                node.inputs.clear()
                node.inputs.extend(inputs)
            else:
                node.inputs[3] = weights
            node.attrs["transB"] = 1
            rewritten += 1
        return rewritten or None
