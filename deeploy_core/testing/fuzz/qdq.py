"""QDQ int8 versions of fuzzed float graphs, laid out the way static quantizers emit them.

The same graphs serve two flavours: ``qdq`` compiles them in exact mode
(bit-exact with ONNX Runtime), ``qdq-fixed`` in fixed-point mode (TFLite's
integer arithmetic, within one quantisation step where at most one layer of its
own rounding lies upstream).

Every activation goes through QuantizeLinear → DequantizeLinear; weights are
int8 initializers behind a DequantizeLinear (per tensor or per output
channel); Conv and Gemm biases are int32 with the scale ``s_input · s_weight``
and zero point 0; the constant operand of Add/Mul/Sub is int8.  Activation
parameters come from the ranges ONNX Runtime computes on the float graph,
then are perturbed (narrower scales saturate, power-of-two scales produce
exact rounding ties) so the integer edge cases get exercised.  Ops that only
move values (pooling by max, reshapes, transposes, concatenations) usually
share their input's parameters, as quantizers make them.

Parameters that are not data (Reshape's shape, Clip's bounds) stay as they are.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import onnx
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from deeploy_core.testing.fuzz.builder import OPSET
from deeploy_core.testing.fuzz.graphs import FuzzGraph, float_graphs
from deeploy_core.validate.reference import reference_session

SHARED_PARAMETER_OPS = frozenset({"MaxPool", "GlobalMaxPool", "Reshape", "Flatten", "Transpose", "Concat"})
"""Drawn ops that only move values: their output usually keeps the input's quantisation, as quantizers do."""
ACTIVATION_TYPES = {"int8": (np.int8, TensorProto.INT8), "uint8": (np.uint8, TensorProto.UINT8)}
SCALE_FACTORS = (1.0, 1.0, 0.5, 0.8, 1.25, 2.0)
"""Perturbations of a calibrated scale; below 1 the quantised tensor saturates."""


@dataclass(frozen=True)
class Quantisation:
    """Scale and zero point, per tensor (scalars) or along ``axis``."""

    scale: np.ndarray
    zero_point: np.ndarray
    axis: int | None = None


def activation_ranges(model: onnx.ModelProto, inputs: dict[str, np.ndarray]) -> dict[str, tuple[float, float]]:
    """(min, max) of every graph input and node output, computed by ONNX Runtime on ``inputs``."""
    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    known = {value.name for value in probe.graph.output}
    for node in probe.graph.node:
        probe.graph.output.extend(helper.make_tensor_value_info(name, TensorProto.FLOAT, None)
                                  for name in node.output if name not in known)
    session = reference_session(probe.SerializeToString())
    names = [output.name for output in session.get_outputs()]
    arrays = dict(zip(names, session.run(names, inputs)))
    arrays.update(inputs)
    return {name: (float(np.min(values)), float(np.max(values))) for name, values in arrays.items()}


def activation_quantisation(draw: st.DrawFn, low: float, high: float, dtype: type) -> tuple[Quantisation, str]:
    """Parameters covering ``[low, high]`` (and 0), symmetric or not, then perturbed; and the feature drawn."""
    low, high = min(low, 0.0), max(high, 0.0)
    info = np.iinfo(dtype)
    symmetric = draw(st.booleans())
    if symmetric:
        scale = max(-low, high) / 127.0
        zero = 0 if info.min < 0 else 128
    else:
        scale = (high - low) / (int(info.max) - int(info.min))
        zero = int(np.clip(round(int(info.min) - low / scale), info.min, info.max)) if scale > 0 else 0
    scale = max(scale, 1e-3) * draw(st.sampled_from(SCALE_FACTORS))
    feature = "symmetric" if symmetric else "asymmetric"
    if draw(st.integers(0, 4)) == 0:
        scale, feature = float(2.0 ** np.round(np.log2(scale))), "power-of-two-scale"
    return Quantisation(np.array(scale, np.float32), np.array(zero, dtype)), feature


def weight_quantisation(values: np.ndarray, axis: int | None, levels: int = 127) -> tuple[np.ndarray, Quantisation]:
    """Symmetric int8 weights in [-levels, levels], per tensor or per slice along ``axis``.

    Beside uint8 activations the weights use 7 bits (``levels`` 63), as ONNX Runtime's ``reduce_range`` does: its
    u8s8 kernels on x86 without VNNI add pairs of products in saturating 16-bit lanes, so full-range weights would
    make the reference itself wrong on such a CPU (a 127-step difference in the fuzzer's own Concat case).
    """
    if axis is None:
        peak = np.array(np.max(np.abs(values)))
    else:
        peak = np.max(np.abs(np.moveaxis(values, axis, 0).reshape(values.shape[axis], -1)), axis=1)
    scale = np.where(peak > 0, peak / float(levels), 1.0).astype(np.float32)
    shape = [1] * values.ndim
    if axis is not None:
        shape[axis] = -1
    integers = np.clip(np.round(values / scale.reshape(shape)), -levels, levels).astype(np.int8)
    return integers, Quantisation(scale, np.zeros(scale.shape, np.int8), axis)


@dataclass
class _Rewrite:
    """The QDQ graph under construction."""

    dtype: type
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    readers: dict[str, str] = field(default_factory=dict)
    """Float tensor → the DequantizeLinear output its consumers read."""
    integers: dict[str, str] = field(default_factory=dict)
    """Float tensor → its quantised tensor."""
    params: dict[str, Quantisation] = field(default_factory=dict)
    features: set[str] = field(default_factory=set)
    constants: dict[str, tuple[str, Quantisation]] = field(default_factory=dict)
    """Float initializer → (the DequantizeLinear output standing for it, its parameters): shared constants once."""

    def constant(self, values: np.ndarray, name: str) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(values), name))
        return name

    def parameters(self, q: Quantisation, stem: str) -> list[str]:
        return [self.constant(q.scale, f"{stem}_scale"), self.constant(q.zero_point, f"{stem}_zero_point")]

    def dequantize(self, integer: str, q: Quantisation, output: str) -> str:
        # make_node leaves out attributes given as None: a per-tensor quantisation has no axis
        self.nodes.append(helper.make_node("DequantizeLinear", [integer, *self.parameters(q, integer)], [output],
                                           name=f"dq_{output}", axis=q.axis))
        return output

    def quantize_activation(self, name: str, q: Quantisation) -> None:
        integer = f"{name}_q"
        self.nodes.append(helper.make_node("QuantizeLinear", [name, *self.parameters(q, f"{name}_qp")], [integer],
                                           name=f"q_{name}"))
        self.integers[name], self.params[name] = integer, q
        self.readers[name] = self.dequantize(integer, q, f"{name}_dq")


def _weight_axis(node: onnx.NodeProto, index: int, rank: int) -> int | None:
    """The output-channel axis of a weight input, or None when it has none."""
    if node.op_type == "Conv" and index == 1:
        return 0
    if node.op_type == "Gemm" and index == 1:
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        return 0 if trans_b else 1
    if node.op_type == "MatMul" and index == 1 and rank >= 2:
        return rank - 1
    return None


def _quantize_constant(draw: st.DrawFn, rewrite: _Rewrite, node: onnx.NodeProto, index: int,
                       initializer: onnx.TensorProto, weight_params: dict[int, Quantisation]) -> str:
    """The tensor a node reads instead of one of its constant inputs."""
    values = numpy_helper.to_array(initializer)
    if values.dtype != np.float32 or node.op_type == "Clip":
        if all(kept.name != initializer.name for kept in rewrite.initializers):
            rewrite.initializers.append(initializer)
        return initializer.name
    name = initializer.name
    if _is_bias(node, index, values):
        activation = rewrite.params[node.input[0]]
        weight = weight_params[1]
        scale = (activation.scale.astype(np.float64) * weight.scale.astype(np.float64)).astype(np.float32)
        per_channel = scale.size > 1
        integers = np.round(values / scale).astype(np.int32)
        rewrite.constant(integers, f"{name}_int32")
        rewrite.features.add("bias-int32")
        q = Quantisation(scale, np.zeros(scale.shape, np.int32), 0 if per_channel else None)
        return rewrite.dequantize(f"{name}_int32", q, f"{name}_dq")
    if name in rewrite.constants:
        reader, weight_params[index] = rewrite.constants[name]
        return reader
    axis = _weight_axis(node, index, values.ndim)
    per_channel = axis is not None and draw(st.booleans())
    integers, q = weight_quantisation(values, axis if per_channel else None,
                                      63 if rewrite.dtype is np.uint8 else 127)
    weight_params[index] = q
    if per_channel:
        rewrite.features.add(f"{node.op_type}:per-channel")
    rewrite.constant(integers, f"{name}_int8")
    rewrite.constants[name] = rewrite.dequantize(f"{name}_int8", q, f"{name}_dq"), q
    return rewrite.constants[name][0]


def _is_bias(node: onnx.NodeProto, index: int, values: np.ndarray) -> bool:
    """Conv's bias, or Gemm's C when it is one value per output column."""
    if index != 2:
        return False
    if node.op_type == "Conv":
        return True
    return node.op_type == "Gemm" and values.ndim == 1 and values.size > 1


def _rewrite_node(draw: st.DrawFn, rewrite: _Rewrite, node: onnx.NodeProto,
                  constants: dict[str, onnx.TensorProto], ranges: dict[str, tuple[float, float]]) -> None:
    """Copy ``node`` reading dequantised inputs, and quantise-dequantise its output (parameters drawn or shared)."""
    inputs: list[str] = []
    weight_params: dict[int, Quantisation] = {}
    for index, name in enumerate(node.input):
        if not name:
            inputs.append(name)
        elif name in constants:
            inputs.append(_quantize_constant(draw, rewrite, node, index, constants[name], weight_params))
        else:
            inputs.append(rewrite.readers[name])
    copy = onnx.NodeProto()
    copy.CopyFrom(node)
    del copy.input[:]
    copy.input.extend(inputs)
    rewrite.nodes.append(copy)
    output = node.output[0]
    if node.op_type in SHARED_PARAMETER_OPS and draw(st.integers(0, 3)) > 0:
        rewrite.features.add("shared-parameters")
        q = next(rewrite.params[name] for name in node.input if name in rewrite.params)
    else:
        q, feature = activation_quantisation(draw, *ranges[output], rewrite.dtype)
        rewrite.features.add(feature)
    rewrite.quantize_activation(output, q)


def quantize_graph(draw: st.DrawFn, graph: FuzzGraph) -> FuzzGraph:
    """The QDQ version of a float graph; graph inputs and outputs may be integers or floats (drawn)."""
    model = graph.model
    ranges = activation_ranges(model, graph.inputs())
    type_name = draw(st.sampled_from(sorted(ACTIVATION_TYPES)))
    dtype, proto_type = ACTIVATION_TYPES[type_name]
    rewrite = _Rewrite(dtype, features={f"activations:{type_name}"})
    constants = {tensor.name: tensor for tensor in model.graph.initializer}
    inputs = []
    for value in model.graph.input:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        q, feature = activation_quantisation(draw, *ranges[value.name], dtype)
        if draw(st.booleans()):
            rewrite.features.add("integer-input")
            inputs.append(helper.make_tensor_value_info(f"{value.name}_q", proto_type, shape))
            rewrite.params[value.name], rewrite.integers[value.name] = q, f"{value.name}_q"
            rewrite.readers[value.name] = rewrite.dequantize(f"{value.name}_q", q, f"{value.name}_dq")
        else:
            inputs.append(value)
            rewrite.quantize_activation(value.name, q)
    for node in model.graph.node:
        _rewrite_node(draw, rewrite, node, constants, ranges)
    outputs = []
    for value in model.graph.output:
        shape = [d.dim_value for d in value.type.tensor_type.shape.dim]
        if draw(st.booleans()):
            rewrite.features.add("integer-output")
            outputs.append(helper.make_tensor_value_info(rewrite.integers[value.name], proto_type, shape))
        else:
            outputs.append(helper.make_tensor_value_info(rewrite.readers[value.name], TensorProto.FLOAT, shape))
    qdq = helper.make_model(helper.make_graph(rewrite.nodes, "fuzz_qdq", inputs, outputs, rewrite.initializers),
                            opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(qdq, full_check=True)
    features = dict(graph.features)
    features.update({f"qdq:{feature}": 1 for feature in rewrite.features})
    return FuzzGraph(qdq, "qdq", graph.seed, tuple(sorted(features.items())))


@st.composite
def qdq_graphs(draw: st.DrawFn, max_layers: int = 5) -> FuzzGraph:
    """A QDQ int8 graph: a drawn float graph, calibrated and quantised."""
    return quantize_graph(draw, draw(float_graphs(max_layers)))


def fixed_point_graphs(max_layers: int = 5) -> st.SearchStrategy[FuzzGraph]:
    """QDQ graphs to compile in fixed-point mode (``--quantization fixed-point``), judged within 1 LSB where
    :mod:`~deeploy_core.testing.fuzz.rounding` says one step holds by construction."""
    return qdq_graphs(max_layers).map(lambda graph: replace(graph, flavour="qdq-fixed"))
