"""Keep the coordinate semantics of ``Upsample`` and ``Resize``-10 through the version converter.

onnx's version converter turns ``Upsample`` (opsets 7 and 9) and ``Resize``-10
into a newer ``Resize`` carrying only ``mode``, so the result silently takes
``Resize``-11's defaults: ``half_pixel`` coordinates and ``round_prefer_floor``
nearest rounding.  The old operators map an output index ``o`` to the input
coordinate ``o / scale`` (``asymmetric``); for ``nearest`` ONNX Runtime takes
the floor of that coordinate when the axis grows and its ceiling when it
shrinks (onnx's reference ``Upsample`` repeats each element ``scale`` times,
which is the same floor).  This module notes such nodes by their output name
before conversion (the converter keeps output names) and writes those
attributes on the converted ``Resize`` afterwards.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

from deeploy_core.frontend.errors import ModelImportError

_FIRST_MODERN_RESIZE = 11
"""The opset whose ``Resize`` introduced ``coordinate_transformation_mode``."""


def note_legacy_resizes(model: onnx.ModelProto, source_opset: int) -> dict[str, str]:
    """Output name → interpolation mode of every node with the old coordinate semantics."""
    noted: dict[str, str] = {}
    for node in model.graph.node:
        if node.domain not in ("", "ai.onnx"):
            continue
        legacy = node.op_type == "Upsample" or (node.op_type == "Resize" and source_opset < _FIRST_MODERN_RESIZE)
        if not legacy:
            continue
        mode = "nearest"
        for attribute in node.attribute:
            if attribute.name == "mode":
                mode = helper.get_attribute_value(attribute).decode()
        noted[node.output[0]] = mode
    return noted


def _constant_values(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    values = {tensor.name: onnx.numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant" and node.attribute and node.attribute[0].name == "value":
            values[node.output[0]] = onnx.numpy_helper.to_array(node.attribute[0].t)
    return values


def _nearest_rounding(scales: np.ndarray | None, output: str) -> str:
    """``floor`` where axes grow, ``ceil`` where they shrink (one rounding per node only)."""
    if scales is None:
        return "floor"  # Upsample only grows; a run-time Resize-10 scale is assumed to grow too
    grows = bool(np.any(scales > 1.0))
    shrinks = bool(np.any(scales < 1.0))
    if grows and shrinks:
        raise ModelImportError(
            f"nearest Resize/Upsample producing {output!r} (opset < 11) enlarges some axes and shrinks others "
            f"(scales {scales.tolist()}): rounds down on some and up on others, which one Resize cannot express"
        )
    return "ceil" if shrinks else "floor"


def restore_legacy_semantics(model: onnx.ModelProto, noted: dict[str, str]) -> None:
    """Give each converted ``Resize`` noted before conversion its old coordinate mapping."""
    if not noted:
        return
    constants = _constant_values(model)
    for node in model.graph.node:
        if node.op_type != "Resize" or node.output[0] not in noted:
            continue
        settings = {"coordinate_transformation_mode": "asymmetric"}
        if noted[node.output[0]] == "nearest":
            scales = constants.get(node.input[2]) if len(node.input) > 2 and node.input[2] else None
            settings["nearest_mode"] = _nearest_rounding(scales, node.output[0])
        kept = [attribute for attribute in node.attribute if attribute.name not in settings]
        del node.attribute[:]
        node.attribute.extend(kept)
        node.attribute.extend(helper.make_attribute(name, value) for name, value in settings.items())
