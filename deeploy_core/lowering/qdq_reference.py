"""The QDQ model as ONNX Runtime's CPU provider fuses it, for use as the validation reference.

ONNX Runtime, at its default optimisation level, turns DequantizeLinear →
Conv/MatMul/Gemm → QuantizeLinear into QLinearConv, QLinearMatMul and QGemm:
an int32 accumulation requantised in float32.  With graph optimisations off
(how the reference runs, so that no other fusion changes float results) it
would instead convolve dequantised floats, whose result depends on the order
of MLAS's float sums and rounds differently on ties.  This module performs
that one fusion itself, on the islands :class:`QDQToIntegerExact` fuses for
those ops — including tf2onnx's MatMul + bias Add (as QGemm) and a Relu or
Clip before the QuantizeLinear, written after the fused node as integer
``Max``/``Min`` (``Q(relu(v)) = max(Q(v), Q(0))``: QuantizeLinear is
monotone) — so exact mode and the reference compute those layers the same
way; every other op runs as the model wrote it.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx_graphsurgeon as gs

from deeploy_core.lowering.qdq import FLOAT_REQUANTIZED, QDQToInteger
from deeploy_core.lowering.remove_identity import remove_identities
from deeploy_core.passes import Subgraph


class _StandardFusion(QDQToInteger):
    """ONNX Runtime's own fusions as standard nodes (no ``requantization`` attribute: ONNX Runtime runs them)."""

    ops = FLOAT_REQUANTIZED
    requantization = None
    absorb_clip = False

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        super().apply(graph, subgraph)
        fused = graph.nodes[-1]
        low, high = fused.attrs.pop("output_min", None), fused.attrs.pop("output_max", None)
        if low is None or high is None:
            return
        output = fused.outputs[0]
        dtype = np.dtype(output.dtype)
        info = np.iinfo(dtype)
        clamped = gs.Variable(f"{fused.name}_unclamped", dtype=output.dtype, shape=output.shape)
        fused.outputs[0] = clamped
        steps = [("Max", low)] if low > info.min else []
        steps += [("Min", high)] if high < info.max else []
        for index, (op, bound) in enumerate(steps):
            target = output if index == len(steps) - 1 else gs.Variable(f"{fused.name}_{op}", dtype=output.dtype,
                                                                        shape=output.shape)
            constant = gs.Constant(f"{fused.name}_{op}_bound", np.array(bound, dtype=dtype))
            graph.nodes.append(gs.Node(op, name=f"{fused.name}_{op}", inputs=[clamped, constant], outputs=[target]))
            clamped = target


def fused_qdq_model(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """``model`` with its Conv/MatMul/Gemm QDQ islands fused as ONNX Runtime fuses them; None when it has none."""
    if not any(node.op_type == "QuantizeLinear" for node in model.graph.node):
        return None
    graph = gs.import_onnx(model)
    remove_identities(graph)  # as ONNX Runtime does before its QDQ fusions
    if not _StandardFusion().apply_pass(graph, {}):
        return None
    graph.cleanup(remove_unused_graph_inputs=False).toposort()
    for index, node in enumerate(graph.nodes):  # ONNX Runtime refuses repeated names (unnamed nodes all end "_integer")
        node.name = f"{node.name}_{index}" if node.name else f"node_{index}"
    fused = gs.export_onnx(graph)
    if not any(opset.domain == "com.microsoft" for opset in fused.opset_import):
        fused.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return fused
