"""Networks made of repeated identical layers: the shape of code that identical-code folding merges.

Issue 29's network repeated one residual block twice (RequantShift, Add,
RequantShift, with the second block's parameters shared with the first), so
two generated layer functions were byte-identical and gcc's ICF folded them;
a gcc 12 bug then let ``-O2`` delete the calls.  These generators write that
network and its relatives, each with its expected outputs:

* :func:`requant_residual_chain`: the issue's network (``repeats=2``) and longer
  chains of the same block;
* :func:`int8_elementwise_chain`: integer Mul, RequantShift and Add layers,
  repeated with shared constants;
* :func:`float_conv_chain`: float Conv → Relu → residual Add blocks sharing one
  weight and bias, so every other block reuses the same arena offsets too.

Integer networks follow QuantLib's export (float-declared tensors holding
integers, the compiler told the input is int8) and come with an exact numpy
reference; the float network's reference is ONNX Runtime's (``expected`` is
None).

Only the build matrix's cases (``tests/build_matrix_cases.py``) use them, so they live here, not in the
installed :mod:`deeploy_core.testing`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper

from deeploy_core.ir.dtypes import INT8, DataType

OPSET = 13
DIV = 16384
"""The RequantShift divisor of the issue's network (a shift by 14)."""


@dataclass(frozen=True)
class RepeatedNetwork:
    """A model, its inputs, the compiler's input types and the expected outputs (None: ask ONNX Runtime)."""

    name: str
    model: onnx.ModelProto
    inputs: dict[str, np.ndarray]
    input_types: dict[str, DataType] = field(default_factory=dict)
    expected: list[np.ndarray] | None = None


def _scalar(name: str, value: float) -> onnx.TensorProto:
    return helper.make_tensor(name, TensorProto.FLOAT, [], [float(value)])


def _requant(source: str, mul: str, add: str, output: str) -> onnx.NodeProto:
    return helper.make_node("RequantShift", [source, mul, add], [output], name=output, div=float(DIV), n_levels=256,
                            signed=1)


def requant_reference(values: np.ndarray, mul: int, add: int = 0) -> np.ndarray:
    """RequantShift with the divisor :data:`DIV`, rounding half up, clamped to int8 (Deeploy's definition)."""
    return np.clip((values.astype(np.int64) * mul + add + DIV // 2) // DIV, -128, 127)


def _int8_input(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-128, 128, shape).astype(np.int8)


def _model(name: str, nodes: list[onnx.NodeProto], initializers: list[onnx.TensorProto], input_name: str,
           shape: tuple[int, ...], output: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info(output, TensorProto.FLOAT, list(shape))], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])


def requant_residual_chain(repeats: int = 2, shape: tuple[int, ...] = (1, 64, 128), seed: int = 0) -> RepeatedNetwork:
    """``repeats`` blocks of ``a = RQ(x, 5949); y = RQ(a + x, 16384)``, every block with the same parameters.

    With ``repeats=2`` this is issue 29's reproducer exactly (the two
    RequantShifts of each kind share their mul/add initializers).
    """
    rng = np.random.default_rng(seed)
    x = _int8_input(rng, shape)
    initializers = [_scalar("m5949", 5949), _scalar("m16384", 16384), _scalar("zero", 0), _scalar("zero2", 0)]
    nodes = []
    previous, value = "x", x.astype(np.int64)
    for index in range(repeats):
        scaled, total, out = f"a{index}", f"s{index}", f"b{index}" if index < repeats - 1 else "y"
        nodes += [_requant(previous, "m5949", "zero2", scaled),
                  helper.make_node("Add", [scaled, previous], [total], name=total),
                  _requant(total, "m16384", "zero", out)]
        a = requant_reference(value, 5949)
        value = requant_reference(a + value, 16384)
        previous = out
    model = _model(f"requant_residual_x{repeats}", nodes, initializers, "x", shape, "y")
    return RepeatedNetwork(model.graph.name, model, {"x": x}, {"x": INT8}, [value.astype(np.int8)])


def int8_elementwise_chain(repeats: int = 3, shape: tuple[int, ...] = (1, 32, 64), seed: int = 1) -> RepeatedNetwork:
    """``repeats`` blocks of ``y = RQ(RQ(3·x, 1/3) + x, 1/2)``: integer Mul, RequantShift, Add, RequantShift.

    Each block maps int8 back to int8 about unchanged, so the values stay
    spread over the range however many blocks there are; the constants are
    shared, so the blocks' layer functions are identical.
    """
    rng = np.random.default_rng(seed)
    x = _int8_input(rng, shape)
    third, half = round(DIV / 3), DIV // 2
    initializers = [_scalar("three", 3), _scalar("third", third), _scalar("half", half), _scalar("offset", 0)]
    nodes = []
    previous, value = "x", x.astype(np.int64)
    for index in range(repeats):
        tripled, scaled, total = f"t{index}", f"r{index}", f"s{index}"
        out = f"y{index}" if index < repeats - 1 else "y"
        nodes += [helper.make_node("Mul", [previous, "three"], [tripled], name=tripled),
                  _requant(tripled, "third", "offset", scaled),
                  helper.make_node("Add", [scaled, previous], [total], name=total),
                  _requant(total, "half", "offset", out)]
        scaled_value = requant_reference(value * 3, third)
        value = requant_reference(scaled_value + value, half)
        previous = out
    model = _model(f"int8_elementwise_x{repeats}", nodes, initializers, "x", shape, "y")
    return RepeatedNetwork(model.graph.name, model, {"x": x}, {"x": INT8}, [value.astype(np.int8)])


def float_conv_chain(repeats: int = 3, channels: int = 8, size: int = 16, seed: int = 2) -> RepeatedNetwork:
    """``repeats`` residual blocks ``y = Relu(Conv3x3(x)) + x`` sharing one weight and bias (float32)."""
    rng = np.random.default_rng(seed)
    shape = (1, channels, size, size)
    x = rng.standard_normal(shape).astype(np.float32)
    weight = (rng.standard_normal((channels, channels, 3, 3)) / np.sqrt(channels * 9)).astype(np.float32)
    bias = (0.1 * rng.standard_normal(channels)).astype(np.float32)
    initializers = [onnx.numpy_helper.from_array(weight, "w"), onnx.numpy_helper.from_array(bias, "b")]
    nodes = []
    previous = "x"
    for index in range(repeats):
        conv, relu = f"conv{index}", f"relu{index}"
        out = f"y{index}" if index < repeats - 1 else "y"
        nodes += [helper.make_node("Conv", [previous, "w", "b"], [conv], name=conv, kernel_shape=[3, 3],
                                   pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", [conv], [relu], name=relu),
                  helper.make_node("Add", [relu, previous], [out], name=out)]
        previous = out
    model = _model(f"float_conv_x{repeats}", nodes, initializers, "x", shape, "y")
    return RepeatedNetwork(model.graph.name, model, {"x": x})
