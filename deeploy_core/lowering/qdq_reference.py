"""The QDQ model as ONNX Runtime's CPU provider fuses it, for use as the validation reference.

ONNX Runtime, at its default optimisation level, turns DequantizeLinear →
Conv/MatMul/Gemm → QuantizeLinear into QLinearConv, QLinearMatMul and QGemm:
an int32 accumulation requantised in float32.  With graph optimisations off
(how the reference runs, so that no other fusion changes float results) it
would instead convolve dequantised floats, whose result depends on the order
of MLAS's float sums and rounds differently on ties.  This module performs
that one fusion itself, with the same islands :class:`QDQToIntegerExact`
fuses, so exact mode and the reference compute those layers the same way and
everything else stays as the model wrote it.
"""

from __future__ import annotations

import onnx
import onnx_graphsurgeon as gs

from deeploy_core.lowering.qdq import QDQToIntegerExact
from deeploy_core.lowering.remove_identity import remove_identities


class _StandardFusion(QDQToIntegerExact):
    """The exact-mode islands as standard QLinear nodes (no ``requantization`` attribute: ONNX Runtime runs them)."""

    requantization = None


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
