"""Contrib operators that exporters emit but ONNX standardised later.

ONNX Runtime's optimiser writes ``LayerNormalization`` into the default domain
of models with opsets older than 17 (where ONNX has no such operator), and
``com.microsoft::Gelu`` for what ONNX calls ``Gelu`` since opset 20.  Their
semantics equal the standard operators', so the importer parks them in a private
domain while the version converter runs (it has no adapter for them), and then
gives them the standard spelling.
"""

from __future__ import annotations

import onnx
from onnx import helper

PARKING_DOMAIN = "ai.deeploy_core.parked"

# (domain, op_type, first standard opset)
_STANDARDISED_LATER: tuple[tuple[str, str, int], ...] = (
    ("", "LayerNormalization", 17),
    ("com.microsoft", "Gelu", 20),
)


def _default_opset(model: onnx.ModelProto) -> int:
    for opset in model.opset_import:
        if opset.domain in ("", "ai.onnx"):
            return opset.version
    return 1


def park_legacy_ops(model: onnx.ModelProto) -> int:
    """Move legacy contrib nodes to the parking domain; returns how many were moved."""
    version = _default_opset(model)
    moved = 0
    for node in model.graph.node:
        for domain, op_type, since in _STANDARDISED_LATER:
            if node.op_type == op_type and node.domain == domain and (domain != "" or version < since):
                node.domain = PARKING_DOMAIN
                moved += 1
    if moved and not any(opset.domain == PARKING_DOMAIN for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(PARKING_DOMAIN, 1))
    return moved


def unpark_legacy_ops(model: onnx.ModelProto) -> None:
    """Give parked nodes their standard spelling (call once the model is at a recent opset)."""
    for node in model.graph.node:
        if node.domain == PARKING_DOMAIN:
            node.domain = ""
    kept = [opset for opset in model.opset_import if opset.domain != PARKING_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept)
