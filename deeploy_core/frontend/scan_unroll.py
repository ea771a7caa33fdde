"""``Scan`` (opset 9 and later) unrolled into copies of its body, one per step of a sequence known at compile time.

A microcontroller network has static shapes, so a Scan's sequence length —
the extent of its scan inputs along their scan axes — is a number, and the
Scan is a fixed chain of body copies: step ``t`` takes the carried state and
slice ``t`` of each scan input (``Gather`` at that index along the input's
axis, counted from the end for a reversed direction), and its scan outputs
are stacked along their output axes (``Unsqueeze`` and one ``Concat``, in
reverse for a reversed output direction).  ONNX's ``LinearAttention`` body is
such a Scan, so function expansion (:mod:`deeploy_core.lowering.expand_unmapped`)
calls this too.  What cannot be unrolled gets a one-line error naming the node.
"""

from __future__ import annotations

import onnx
from onnx import helper, numpy_helper, shape_inference

import numpy as np

from deeploy_core.frontend.errors import ModelImportError
from deeploy_core.frontend.loop_unroll import _Names, _unsqueeze
from deeploy_core.frontend.node_label import node_label
from deeploy_core.frontend.unknown_shapes import is_static, tensor_dims

MAX_STEPS = 4096
"""Longer sequences would copy the body too many times for a microcontroller's code size."""


def _attribute(node: onnx.NodeProto, name: str, default: object) -> object:
    for attribute in node.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _error(node: onnx.NodeProto, index: int, reason: str) -> ModelImportError:
    return ModelImportError(f"{node_label(node, index)} (Scan): cannot be unrolled: {reason}")


def _steps(node: onnx.NodeProto, index: int, scan_inputs: list[str], axes: list[int],
           dims: dict[str, list | None]) -> int:
    """The sequence length every scan input agrees on."""
    lengths = set()
    for name, axis in zip(scan_inputs, axes):
        shape = dims.get(name)
        if not is_static(shape):
            raise _error(node, index, f"scan input {name!r} has no static shape")
        assert shape is not None
        if not -len(shape) <= axis < len(shape):
            raise _error(node, index, f"scan axis {axis} is out of range for scan input {name!r}")
        lengths.add(int(shape[axis % len(shape)]))
    if len(lengths) != 1:
        raise _error(node, index, f"its scan inputs have different lengths {sorted(lengths)}")
    steps = lengths.pop()
    if not 0 < steps <= MAX_STEPS:
        raise _error(node, index, f"a sequence of {steps} steps (1 to {MAX_STEPS} can be unrolled)")
    return steps


def _unroll(node: onnx.NodeProto, index: int, dims: dict[str, list | None], names: _Names,
            opset: int) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    body = _attribute(node, "body", None)
    if not isinstance(body, onnx.GraphProto):
        raise _error(node, index, "it has no body")
    if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for n in body.node for a in n.attribute):
        raise _error(node, index, "its body holds a node with a subgraph of its own")
    scan_count = int(str(_attribute(node, "num_scan_inputs", 0)))
    states = list(node.input[:len(node.input) - scan_count])
    scan_inputs = list(node.input[len(states):])
    outputs_count = len(body.output) - len(states)
    input_axes = list(_attribute(node, "scan_input_axes", None) or [0] * scan_count)  # type: ignore[call-overload]
    input_directions = list(_attribute(node, "scan_input_directions", None) or [0] * scan_count)  # type: ignore
    output_axes = list(_attribute(node, "scan_output_axes", None) or [0] * outputs_count)  # type: ignore
    output_directions = list(_attribute(node, "scan_output_directions", None) or [0] * outputs_count)  # type: ignore
    if scan_count < 1 or len(body.input) != len(states) + scan_count or outputs_count < 0:
        raise _error(node, index, f"its body's {len(body.input)} inputs do not fit {len(states)} states and "
                                  f"{scan_count} scan inputs")
    steps = _steps(node, index, scan_inputs, [int(a) for a in input_axes], dims)
    prefix = node.name or f"Scan_{index}"
    nodes: list[onnx.NodeProto] = []
    initializers: list[onnx.TensorProto] = []
    local: dict[str, str] = {}
    for tensor in body.initializer:
        copied = onnx.TensorProto()
        copied.CopyFrom(tensor)
        copied.name = names.fresh(f"{prefix}/{tensor.name}")
        local[tensor.name] = copied.name
        initializers.append(copied)
    body_inputs = [value.name for value in body.input]
    body_outputs = [value.name for value in body.output]
    stacked: list[list[str]] = [[] for _ in range(outputs_count)]
    for step in range(steps):
        scope = dict(local)
        scope.update(zip(body_inputs[:len(states)], states))
        for position, (source, axis, direction) in enumerate(zip(scan_inputs, input_axes, input_directions)):
            at = numpy_helper.from_array(np.array(step if not direction else steps - 1 - step, np.int64),
                                         names.fresh(f"{prefix}/step{step}/at{position}"))
            initializers.append(at)
            sliced = names.fresh(f"{prefix}/step{step}/slice{position}")
            nodes.append(helper.make_node("Gather", [source, at.name], [sliced], name=names.fresh(f"{sliced}/Gather"),
                                          axis=int(axis)))
            scope[body_inputs[len(states) + position]] = sliced
        for number, item in enumerate(body.node):
            copied = onnx.NodeProto()
            copied.CopyFrom(item)
            copied.name = names.fresh(f"{prefix}/step{step}/{item.name or f'{item.op_type}_{number}'}")
            copied.input[:] = [scope.get(name, name) for name in item.input]
            for position, name in enumerate(item.output):
                if name:
                    scope[name] = names.fresh(f"{prefix}/step{step}/{name}")
                    copied.output[position] = scope[name]
            nodes.append(copied)
        states = [scope.get(name, name) for name in body_outputs[:len(states)]]
        for values, name in zip(stacked, body_outputs[len(states):]):
            values.append(scope.get(name, name))
    for name, value in zip(node.output, states):
        if name:
            nodes.append(helper.make_node("Identity", [value], [name], name=names.fresh(f"{prefix}/{name}")))
    for position, (name, values) in enumerate(zip(node.output[len(states):], stacked)):
        if not name:
            continue
        axis, ordered = int(output_axes[position]), values[::-1] if output_directions[position] else values
        pieces = []
        axes_name = names.fresh(f"{prefix}/out{position}/axes")
        for step, value in enumerate(ordered):
            piece = names.fresh(f"{prefix}/out{position}/step{step}")
            unsqueeze, axes = _unsqueeze(opset, value, piece, names.fresh(f"{piece}/Unsqueeze"), axes_name)
            if axis != 0:  # _unsqueeze writes axis 0
                if axes is not None:
                    axes = numpy_helper.from_array(np.array([axis], np.int64), axes_name)
                else:
                    unsqueeze = helper.make_node("Unsqueeze", [value], [piece], name=unsqueeze.name, axes=[axis])
            if axes is not None and step == 0:
                initializers.append(axes)
            nodes.append(unsqueeze)
            pieces.append(piece)
        nodes.append(helper.make_node("Concat", pieces, [name], name=names.fresh(f"{prefix}/out{position}"),
                                      axis=axis))
    return nodes, initializers


def unroll_scans(model: onnx.ModelProto, opset: int) -> int:
    """Replace every default-domain Scan of the main graph by its unrolled steps (in place); how many were."""
    graph = model.graph
    scans = [index for index, node in enumerate(graph.node) if node.op_type == "Scan"
             and node.domain in ("", "ai.onnx")]
    if not scans:
        return 0
    if opset < 9:
        raise _error(graph.node[scans[0]], scans[0], f"Scan-8 (opset {opset}, with a batch axis) is not supported")
    inferred = shape_inference.infer_shapes(model, check_type=False, strict_mode=False, data_prop=True)
    dims = tensor_dims(inferred.graph)
    names = _Names(model)
    replaced: dict[int, list[onnx.NodeProto]] = {}
    for index in scans:
        nodes, initializers = _unroll(graph.node[index], index, dims, names, opset)
        replaced[index] = nodes
        graph.initializer.extend(initializers)
    kept = [item for index, node in enumerate(graph.node) for item in replaced.get(index, [node])]
    del graph.node[:]
    graph.node.extend(kept)
    return len(scans)
