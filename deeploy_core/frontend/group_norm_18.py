"""``GroupNormalization``-18 rewritten in its opset-21 form.

Opset 18's ``GroupNormalization`` takes one scale and one bias per group;
opset 21 replaced it (the checker now rejects the opset-18 form as
deprecated) with one scale and bias per channel, and the version converter
only relabels the node.  Per-group values mean the same as per-channel values
repeated over each group's channels, so each value is repeated
``channels / groups`` times in the graph (Reshape to ``[G, 1]`` → Expand to
``[G, C/G]`` → Reshape to ``[C]``; constant folding turns it into one
initializer), and the node is parked (see :mod:`legacy_ops`) until the model
is at an opset where the standard spelling means the per-channel form.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper, shape_inference

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.legacy_ops import PARKING_DOMAIN

_PER_GROUP_OPSETS = range(18, 21)


def _channels(model: onnx.ModelProto) -> dict[str, int]:
    """Known channel counts (axis 1) of the graph's tensors, from lenient shape inference."""
    try:
        inferred = shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference problems are reported later by the strict pass
        inferred = model
    channels: dict[str, int] = {}
    for value in [*inferred.graph.input, *inferred.graph.value_info]:
        dims = value.type.tensor_type.shape.dim
        if len(dims) >= 2 and dims[1].HasField("dim_value") and dims[1].dim_value > 0:
            channels[value.name] = dims[1].dim_value
    return channels


def _groups(node: onnx.NodeProto) -> int:
    for attribute in node.attribute:
        if attribute.name == "num_groups":
            return int(helper.get_attribute_value(attribute))
    raise ModelImportError(f"node {node.name or node.output[0]!r} (GroupNormalization): no num_groups attribute")


def per_channel_group_norms(model: onnx.ModelProto, source_opset: int) -> int:
    """Rewrite opset-18 ``GroupNormalization`` nodes; returns how many were rewritten."""
    if source_opset not in _PER_GROUP_OPSETS:
        return 0
    if not any(node.op_type == "GroupNormalization" and node.domain in ("", "ai.onnx") for node in model.graph.node):
        return 0
    channels = _channels(model)
    nodes: list[onnx.NodeProto] = []
    rewritten = 0
    for node in model.graph.node:
        if node.op_type != "GroupNormalization" or node.domain not in ("", "ai.onnx"):
            nodes.append(node)
            continue
        label = node.name or node.output[0]
        groups, count = _groups(node), channels.get(node.input[0])
        if count is None:
            raise ModelImportError(f"node {label!r} (GroupNormalization-18): the channel count of its input is unknown, "
                                   "so its per-group scale and bias cannot be spread over the channels")
        if groups <= 0 or count % groups:
            raise ModelImportError(f"node {label!r} (GroupNormalization-18): {count} channels do not split into "
                                   f"{groups} groups")
        shapes = {"grouped": [groups, 1], "spread": [groups, count // groups], "flat": [count]}
        for suffix, shape in shapes.items():
            model.graph.initializer.append(
                onnx.numpy_helper.from_array(np.asarray(shape, np.int64), f"{label}__{suffix}_shape"))
        spread_inputs = []
        for role, value in zip(("scale", "bias"), node.input[1:3]):
            stem = f"{label}__{role}"
            nodes.extend([
                helper.make_node("Reshape", [value, f"{label}__grouped_shape"], [f"{stem}_grouped"], name=f"{stem}_grouped"),
                helper.make_node("Expand", [f"{stem}_grouped", f"{label}__spread_shape"], [f"{stem}_spread"],
                                 name=f"{stem}_spread"),
                helper.make_node("Reshape", [f"{stem}_spread", f"{label}__flat_shape"], [f"{stem}_per_channel"],
                                 name=f"{stem}_per_channel"),
            ])
            spread_inputs.append(f"{stem}_per_channel")
        del node.input[1:]
        node.input.extend(spread_inputs)
        node.domain = PARKING_DOMAIN
        nodes.append(node)
        rewritten += 1
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    if not any(opset.domain == PARKING_DOMAIN for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid(PARKING_DOMAIN, 1))
    return rewritten
