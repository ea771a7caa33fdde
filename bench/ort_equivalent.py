"""Deeploy's RequantShift spelled in standard ONNX, so ONNX Runtime can time the integer networks too.

ONNX Runtime has no RequantShift kernel.  For the benchmark's second column
every RequantShift node is replaced by the standard ops that compute the same
values (docs: ../shared/docs/deeploy-op-semantics.md §2): in float64, which
holds every int32 product exactly, ``clip(floor((x*mul + add) / 2^s + 1/2))``
with the clip bounds from ``n_levels`` and ``signed``, then back to float32.
Per-channel constants are applied along axis 1, as Deeploy does.  The
benchmark checks ONNX Runtime's outputs against the expected ones before it
reports a time, so a wrong rewrite shows as a failure, not as a fast number.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _attributes(node: onnx.NodeProto) -> dict[str, object]:
    return {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}


def _scalar(value: object) -> float:
    """An attribute that Deeploy's exporters store either as a number or as a one-element tensor."""
    if isinstance(value, onnx.TensorProto):
        return float(numpy_helper.to_array(value).reshape(-1)[0])
    return float(value)  # type: ignore[arg-type]


def _channel_constant(value: np.ndarray, rank: int) -> np.ndarray:
    """``value`` as float64 broadcastable along axis 1 of a rank-``rank`` tensor."""
    value = np.asarray(value, dtype=np.float64)
    if value.ndim == 1 and value.size > 1 and rank >= 2:
        return value.reshape((1, value.size) + (1,) * (rank - 2))
    return value


def _constants(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    values = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer}
    for node in model.graph.node:
        if node.op_type == "Constant":
            values[node.output[0]] = numpy_helper.to_array(_attributes(node)["value"])  # type: ignore[arg-type]
    return values


def _rank_of(model: onnx.ModelProto, name: str) -> int:
    for info in (*model.graph.value_info, *model.graph.input, *model.graph.output):
        if info.name == name and info.type.tensor_type.HasField("shape"):
            return len(info.type.tensor_type.shape.dim)
    return 4


def _replacement(node: onnx.NodeProto, index: int, constants: dict[str, np.ndarray], rank: int,
                 ) -> Iterator[onnx.NodeProto | onnx.TensorProto]:
    attributes = _attributes(node)
    shift = int(math.log2(_scalar(attributes["div"])))
    levels = int(_scalar(attributes.get("n_levels", attributes.get("n_levels_out", 256))))
    signed = bool(_scalar(attributes["signed"]))
    low, high = (-(levels // 2), levels // 2 - 1) if signed else (0, levels - 1)
    stem = f"__rqs{index}"
    named = {
        "mul": _channel_constant(constants[node.input[1]], rank),
        "add": _channel_constant(constants[node.input[2]], rank),
        "scale": np.asarray(1.0 / (1 << shift), dtype=np.float64),
        "half": np.asarray(0.5 if shift > 0 else 0.0, dtype=np.float64),
        "low": np.asarray(low, dtype=np.float64),
        "high": np.asarray(high, dtype=np.float64),
    }
    for key, value in named.items():
        yield numpy_helper.from_array(value, f"{stem}_{key}")
    x = node.input[0]
    steps = [
        ("Cast", [x], {"to": TensorProto.DOUBLE}),
        ("Mul", ["@", f"{stem}_mul"], {}),
        ("Add", ["@", f"{stem}_add"], {}),
        ("Mul", ["@", f"{stem}_scale"], {}),
        ("Add", ["@", f"{stem}_half"], {}),
        ("Floor", ["@"], {}),
        ("Max", ["@", f"{stem}_low"], {}),
        ("Min", ["@", f"{stem}_high"], {}),
        ("Cast", ["@"], {"to": TensorProto.FLOAT}),
    ]
    previous = ""
    for step, (op, inputs, attrs) in enumerate(steps):
        output = node.output[0] if step == len(steps) - 1 else f"{stem}_t{step}"
        yield helper.make_node(op, [previous if name == "@" else name for name in inputs], [output], **attrs)
        previous = output


def standard_onnx(model_path: Path) -> bytes:
    """The model with every RequantShift replaced by standard ops (serialised; other nodes unchanged)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(str(model_path)))
    constants = _constants(model)
    nodes: list[onnx.NodeProto] = []
    for index, node in enumerate(model.graph.node):
        if node.op_type != "RequantShift":
            nodes.append(node)
            continue
        for item in _replacement(node, index, constants, _rank_of(model, node.input[0])):
            if isinstance(item, onnx.TensorProto):
                model.graph.initializer.append(item)
            else:
                nodes.append(item)
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model.SerializeToString()
