"""Cases of fused com.microsoft QLinear nodes and the ONNX model that holds a list of them, for tests.

Exact mode's float32 kernels (``qlinear_exact_cases``) and fixed-point's TFLite kernels (``tflite_cases``) are
tested the same way: each case is one fused node on its own graph inputs and output, and a whole list of cases is
one model, so one compile and one build check dozens of scales, zero points, shapes and clamps.  The two differ
only in the ``requantization`` attribute and in the reference they compare with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ELEMENT = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8}


@dataclass
class Case:
    """One fused node: operand shapes/scales/zero points, output quantisation, attributes, optional clamp."""

    op: str
    shapes: list[tuple[int, ...]]
    scales: list[float]
    zeros: list[int]
    output_shape: tuple[int, ...]
    output_scale: float
    output_zero: int
    dtype: np.dtype = field(default_factory=lambda: np.dtype(np.int8))
    attrs: dict[str, object] = field(default_factory=dict)
    clamp: tuple[int, int] | None = None
    """(output_min, output_max) of the fused node; None: the output type's range."""


def initializers(case: Case, index: int) -> list[onnx.TensorProto]:
    """Case ``index``'s scales and zero points ``c{index}_s{k}``/``c{index}_z{k}`` (k = the output last)."""
    tensors = []
    for operand, (scale, zero) in enumerate(zip([*case.scales, case.output_scale], [*case.zeros, case.output_zero])):
        tensors.append(numpy_helper.from_array(np.array(scale, np.float32), f"c{index}_s{operand}"))
        tensors.append(numpy_helper.from_array(np.array(zero, case.dtype), f"c{index}_z{operand}"))
    return tensors


def graph_io(case: Case, index: int) -> tuple[list[onnx.ValueInfoProto], onnx.ValueInfoProto]:
    """Case ``index``'s graph inputs ``c{index}_x{k}`` and its graph output ``c{index}_y``."""
    element = ELEMENT[np.dtype(case.dtype)]
    inputs = [helper.make_tensor_value_info(f"c{index}_x{operand}", element, list(shape))
              for operand, shape in enumerate(case.shapes)]
    return inputs, helper.make_tensor_value_info(f"c{index}_y", element, list(case.output_shape))


def model(nodes: list[onnx.NodeProto], inputs: list, outputs: list, tensors: list, name: str) -> onnx.ModelProto:
    """A model of opset 17 and com.microsoft 1."""
    graph = helper.make_graph(nodes, name, inputs, outputs, tensors)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])


def fused_model(cases: list[Case], requantization: str, name: str,
                defaults: dict[str, dict[str, object]] | None = None) -> onnx.ModelProto:
    """Every case as one com.microsoft node with ``requantization`` on graph inputs and outputs.

    ``defaults`` maps an op to attributes its nodes get unless the case sets them.
    """
    nodes, inputs, outputs, tensors = [], [], [], []
    for index, case in enumerate(cases):
        case_inputs, output = graph_io(case, index)
        inputs += case_inputs
        outputs.append(output)
        tensors += initializers(case, index)
        names = []
        for operand in range(len(case.shapes)):
            names += [f"c{index}_x{operand}", f"c{index}_s{operand}", f"c{index}_z{operand}"]
        names += [f"c{index}_s{len(case.shapes)}", f"c{index}_z{len(case.shapes)}"]
        attrs: dict[str, object] = {**(defaults or {}).get(case.op, {}), **case.attrs, "requantization": requantization}
        if case.clamp is not None:
            attrs["output_min"], attrs["output_max"] = case.clamp
        nodes.append(helper.make_node(case.op, names, [f"c{index}_y"], name=f"case{index}", domain="com.microsoft",
                                      **attrs))
    return model(nodes, inputs, outputs, tensors, name)
