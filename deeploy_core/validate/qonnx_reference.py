"""QONNX models as standard ONNX for the reference: ONNX Runtime cannot run ``Quant``, ``Trunc`` or ``BipolarQuant``.

``validate`` runs the model on ONNX Runtime; a QONNX model (Brevitas'
``export_qonnx``) would stop it at its first ``Quant`` ("not a registered
function/op").  The reference therefore runs the model with those ops
rewritten as the compiler rewrites them (:mod:`deeploy_core.lowering.qonnx`:
folded integer weights, QuantizeLinear/DequantizeLinear, the Trunc window
sum), a rewrite held bit for bit to a numpy reading of QONNX's definitions
and to qonnx's own executor by the tests; every other node runs as written.
"""

from __future__ import annotations

import onnx

from deeploy_core.frontend.qonnx_ops import QONNX_DOMAIN


def has_qonnx_ops(model: onnx.ModelProto) -> bool:
    """Whether any node of the main graph is in QONNX's domain."""
    return any(node.domain == QONNX_DOMAIN for node in model.graph.node)


def standard_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with its QONNX nodes lowered to standard ONNX (the model itself when it has none)."""
    if not has_qonnx_ops(model):
        return model
    import onnx_graphsurgeon as gs

    from deeploy_core.lowering.qonnx import lower_qonnx

    try:  # shapes let the lowering use its integer Trunc; strict inference stops at nothing here
        model = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - onnx raises several types; the lowering works without shapes
        pass
    graph = gs.import_onnx(model)
    lower_qonnx(graph)
    lowered = gs.export_onnx(graph)
    kept = [opset for opset in lowered.opset_import if opset.domain != QONNX_DOMAIN]
    del lowered.opset_import[:]
    lowered.opset_import.extend(kept)
    return lowered
