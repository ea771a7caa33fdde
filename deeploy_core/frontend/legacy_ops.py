"""Contrib operators that exporters emit but ONNX standardised later.

ONNX Runtime's optimiser writes ``LayerNormalization`` into the default domain
of models with opsets older than 17 (where ONNX has no such operator), and
``com.microsoft::Gelu`` for what ONNX calls ``Gelu`` since opset 20.  Their
semantics equal the standard operators', so the importer parks them in a private
domain while the version converter runs (it has no adapter for them), and then
gives them the standard spelling.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
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


def repair_attribute_pads(model: onnx.ModelProto) -> int:
    """``Pad`` nodes written with opset-2 attributes (``pads``, ``value``) in a newer opset get input form.

    QuantLib exports such nodes; they mean exactly what the input form means.
    """
    if _default_opset(model) < 11:
        return 0
    repaired = 0
    for node in model.graph.node:
        if node.op_type != "Pad" or node.domain not in ("", "ai.onnx") or len(node.input) != 1:
            continue
        attributes = {attribute.name: onnx.helper.get_attribute_value(attribute) for attribute in node.attribute}
        if "pads" not in attributes:
            continue
        pads_name, value_name = f"{node.output[0]}__pads", f"{node.output[0]}__value"
        model.graph.initializer.append(onnx.numpy_helper.from_array(np.asarray(attributes["pads"], np.int64), pads_name))
        model.graph.initializer.append(
            onnx.numpy_helper.from_array(np.asarray(float(attributes.get("value", 0.0)), np.float32), value_name)
        )
        node.input.extend([pads_name, value_name])
        kept = [attribute for attribute in node.attribute if attribute.name == "mode"]
        del node.attribute[:]
        node.attribute.extend(kept)
        repaired += 1
    return repaired


def unpark_legacy_ops(model: onnx.ModelProto) -> None:
    """Give parked nodes their standard spelling (call once the model is at a recent opset)."""
    for node in model.graph.node:
        if node.domain == PARKING_DOMAIN:
            node.domain = ""
    kept = [opset for opset in model.opset_import if opset.domain != PARKING_DOMAIN]
    del model.opset_import[:]
    model.opset_import.extend(kept)
