"""A composer that writes an integer network with onnx.helper and computes its numpy reference in the same step.

Each call adds one node the way QuantLib exports it (default domain, float-declared tensors and initializers
holding integers) and evaluates the same op with the numpy reference, so the graph and its expected output can
never drift apart.  Requantisations are calibrated on the reference values flowing through them: the multiplier
and shift map the accumulator's largest magnitude to about ``target`` (a little below the int8 bound), so every
intermediate tensor spans most of its 8-bit range without saturating wholesale, whatever the weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper

from tests.dialect_reference.basic import requant_shift


@dataclass(frozen=True)
class Requant:
    """One RequantShift's parameters: y = clamp((x·mul + add + div/2) >> log2 div) into n_levels, signed or not."""

    mul: int
    add: int
    div: int
    n_levels: int = 256
    signed: bool = True

    def apply(self, x: np.ndarray) -> np.ndarray:
        return requant_shift(x, np.array(self.mul), np.array(self.add), self.div, self.n_levels, self.signed)

    def attributes(self) -> dict[str, Any]:
        """The attributes QuantLib writes on a RequantShift (div, n_levels, signed)."""
        return {"div": float(self.div), "n_levels": self.n_levels, "signed": int(self.signed)}


def calibrate(values: np.ndarray, target: int = 100, signed: bool = True, offset: float = 0.25) -> Requant:
    """A requantisation taking ``max |values|`` to about ``target``: mul in [64, 128), div the matching power of two.

    ``offset`` (a fraction of one output step) makes ``add`` non-zero, so the add term is exercised too.
    """
    peak = max(int(np.abs(np.asarray(values, np.int64)).max()), 1)
    scale = target / peak
    shift = 0
    while round(scale * (1 << shift)) < 64:
        shift += 1
    mul = max(1, round(scale * (1 << shift)))
    return Requant(mul=mul, add=round(offset * (1 << shift)), div=1 << shift, signed=signed)


@dataclass
class Composer:
    """Nodes, initializers, graph inputs and the reference value of every tensor of one test network."""

    name: str
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: list[onnx.TensorProto] = field(default_factory=list)
    inputs: list[onnx.ValueInfoProto] = field(default_factory=list)
    values: dict[str, np.ndarray] = field(default_factory=dict)
    input_dtypes: dict[str, np.dtype[Any]] = field(default_factory=dict)
    ranges: dict[str, tuple[int, int]] = field(default_factory=dict)
    """The 8-bit tensors (requantised, normalised, softmax outputs) and their ranges, whose histograms the tests
    check."""

    def input(self, name: str, values: np.ndarray) -> str:
        """A graph input declared FLOAT (as QuantLib does) whose integer type the test passes as an input type."""
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(values.shape)))
        self.values[name] = values
        self.input_dtypes[name] = values.dtype
        return name

    def constant(self, name: str, values: np.ndarray) -> str:
        """A float initializer holding integers (the front end types it by its value range)."""
        data = np.asarray(values)
        self.initializers.append(helper.make_tensor(name, TensorProto.FLOAT, list(data.shape),
                                                    data.astype(np.float32).reshape(-1).tolist()))
        self.values[name] = data.astype(np.int64)
        return name

    def shape(self, name: str, dims: list[int]) -> str:
        """An int64 initializer (a Reshape's target shape, which ONNX types strictly)."""
        self.initializers.append(helper.make_tensor(name, TensorProto.INT64, [len(dims)], dims))
        self.values[name] = np.array(dims, np.int64)
        return name

    def node(self, op: str, inputs: list[str], output: str, value: np.ndarray, **attributes: Any) -> str:
        """One node of ``op`` whose output's reference value the caller computed with the op's numpy reference."""
        self.nodes.append(helper.make_node(op, inputs, [output], name=output, **attributes))
        self.values[output] = np.asarray(value)
        return output

    def apply(self, op: str, inputs: list[str], output: str, reference: Callable[..., np.ndarray],
              **attributes: Any) -> str:
        """``node`` with the reference evaluated on the inputs' reference values (extra keywords become attributes)."""
        return self.node(op, inputs, output, reference(*(self.values[name] for name in inputs)), **attributes)

    def requant_shift(self, x: str, output: str, target: int = 100, signed: bool = True,
                      requant: Requant | None = None) -> str:
        """A RequantShift after ``x``, calibrated on x's reference values unless ``requant`` is given."""
        chosen = requant or calibrate(self.values[x], target, signed)
        mul = self.constant(f"{output}_mul", np.array(chosen.mul))
        add = self.constant(f"{output}_add", np.array(chosen.add))
        self.node("RequantShift", [x, mul, add], output, chosen.apply(self.values[x]), **chosen.attributes())
        self.ranges[output] = (-128, 127) if chosen.signed else (0, 255)
        return output

    def model(self, outputs: list[str]) -> onnx.ModelProto:
        """The network with ``outputs`` as float-declared graph outputs, opset 13, default domain only."""
        declared = [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(self.values[name].shape))
                    for name in outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, declared, initializer=self.initializers)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def weights(rng: np.random.Generator, shape: tuple[int, ...], bound: int = 64) -> np.ndarray:
    """int8-ranged weights, uniform in [-bound, bound)."""
    return rng.integers(-bound, bound, shape).astype(np.int64)


def saturation(values: np.ndarray, low: int = -128, high: int = 127) -> float:
    """The fraction of elements sitting on either bound of the range."""
    data = np.asarray(values)
    return float(np.mean((data == low) | (data == high)))


def smallest_power_of_two(bound: float, limit: int = 127) -> int:
    """The smallest 2^s with bound / 2^s <= limit: a shift that keeps a magnitude bound inside int8."""
    shift = 0
    while bound / (1 << shift) > limit:
        shift += 1
    return 1 << shift


def least_saturating_power_of_two(reference: Callable[[int], np.ndarray], fraction: float = 0.01) -> int:
    """The smallest divisor 2^s whose output saturates at most ``fraction`` of its elements (for clamping ops)."""
    for shift in range(32):
        if saturation(reference(1 << shift)) <= fraction:
            return 1 << shift
    raise ValueError("no power-of-two divisor keeps the output off its bounds")


# -- Deeploy's row-wise ops, parameters chosen on the reference values -------------------------------------------

def i_layer_norm(c: Composer, x: str, output: str, rng: np.random.Generator) -> str:
    """iLayerNorm with weights around 128 and small biases; D the smallest power of two that cannot wrap.

    The op wraps to int8 instead of saturating, so D comes from a bound on the pre-shift value
    (|x - mean|·|w| / isqrt(var) + |b|), not from the output, which would hide a wrap.
    """
    from tests.dialect_reference.rowwise import c_div, i_layer_norm as reference, isqrt

    length = c.values[x].shape[-1]
    weight = rng.integers(64, 192, (length,)).astype(np.int64)
    bias = rng.integers(-256, 256, (length,)).astype(np.int64)
    data = np.asarray(c.values[x], np.int64)
    centred = data - c_div(data.sum(axis=-1, keepdims=True), length)
    root = isqrt(c_div((centred * centred).sum(axis=-1, keepdims=True), length) + 1)
    bound = float((np.abs(centred * weight) / root + np.abs(bias)).max())
    d = smallest_power_of_two(bound)
    w, b = c.constant(f"{output}_weight", weight), c.constant(f"{output}_bias", bias)
    c.node("iLayerNorm", [x, w, b], output, reference(data, weight, bias, d), D=float(d), n_levels=256)
    c.ranges[output] = (-128, 127)
    return output


def i_rms_norm(c: Composer, x: str, output: str, rng: np.random.Generator) -> str:
    """iRMSNorm with weights around 128; D the smallest power of two that saturates at most 1% of the output."""
    from tests.dialect_reference.rowwise import i_rms_norm as reference

    length = c.values[x].shape[-1]
    weight = rng.integers(64, 192, (length,)).astype(np.int64)
    data = np.asarray(c.values[x], np.int64)
    d = least_saturating_power_of_two(lambda div: reference(data, weight, div))
    w = c.constant(f"{output}_weight", weight)
    c.node("iRMSNorm", [x, w], output, reference(data, weight, d), D=float(d), n_levels=256)
    c.ranges[output] = (-128, 127)
    return output


def ita_max(c: Composer, x: str, output: str) -> str:
    """ITAMax over the last axis (uint8 probabilities summing to about 255 per row)."""
    from tests.dialect_reference.rowwise import ita_max as reference

    c.ranges[output] = (0, 255)
    return c.node("ITAMax", [x], output, reference(c.values[x], 256), n_levels=256)


def ita_partial_max(c: Composer, x: str, output: str, group_width: int) -> str:
    """ITAPartialMax over the last axis in groups of ``group_width`` columns (scaled to 127)."""
    from tests.dialect_reference.rowwise import ita_partial_max as reference

    c.ranges[output] = (0, 127)
    return c.node("ITAPartialMax", [x], output, reference(c.values[x], group_width, 256), group_width=group_width,
                  n_levels=256)


# -- plain integer layers followed by a calibrated RequantShift ----------------------------------------------------

def matmul_requant(c: Composer, x: str, b: str, output: str) -> str:
    """MatMul (int32) then RequantShift: the lowering fuses the pair into one requantised MatMul."""
    from tests.dialect_reference.basic import matmul

    c.apply("MatMul", [x, b], f"{output}_acc", matmul)
    return c.requant_shift(f"{output}_acc", output)


def projection(c: Composer, x: str, width: int, output: str, rng: np.random.Generator) -> str:
    """x @ W for a random int8 weight W [x's last axis, width], requantised to int8."""
    w = c.constant(f"{output}_w", weights(rng, (c.values[x].shape[-1], width)))
    return matmul_requant(c, x, w, output)


def gemm_requant(c: Composer, x: str, width: int, output: str, rng: np.random.Generator) -> str:
    """Gemm (int8 weight [K, width], int32 bias [width]) then RequantShift."""
    from tests.dialect_reference.basic import gemm

    w = c.constant(f"{output}_w", weights(rng, (c.values[x].shape[-1], width)))
    bias = c.constant(f"{output}_b", rng.integers(-2000, 2000, width))
    c.apply("Gemm", [x, w, bias], f"{output}_acc", gemm)
    return c.requant_shift(f"{output}_acc", output)


def add_requant(c: Composer, a: str, b: str, output: str) -> str:
    """A residual: the exact int32 sum a + b, then RequantShift back to int8."""
    c.apply("Add", [a, b], f"{output}_acc", lambda p, q: np.asarray(p, np.int64) + np.asarray(q, np.int64))
    return c.requant_shift(f"{output}_acc", output)


# -- Deeploy's element-wise ops ------------------------------------------------------------------------------------

def i_gelu(c: Composer, x: str, output: str, b: int = -40, one: int = 1743) -> str:
    """iGELU with I-BERT's constants for an int8 input whose unit is 1/32 (b = -40 clips erf at |x| ≈ 1.25)."""
    from tests.dialect_reference.elementwise import igelu

    return c.node("iGELU", [x], output, igelu(c.values[x], b, one), b=b, one=one)


def i_hardswish(c: Composer, x: str, output: str, unit: int = 16) -> str:
    """iHardswish for an int8 input of scale 1/``unit``: three = 3·unit, six = 6·unit, one_over_six = 2^10/6."""
    from tests.dialect_reference.elementwise import ihardswish

    three, six, one_over_six = 3 * unit, 6 * unit, round(1024 / 6)
    return c.node("iHardswish", [x], output, ihardswish(c.values[x], one_over_six, three, six),
                  one_over_six=one_over_six, three=three, six=six)


def requantized_i_hardswish(c: Composer, x: str, output: str, unit: int = 16) -> str:
    """RequantizediHardswish (attributes mul, add, shift: Deeploy's fused form), calibrated like a RequantShift."""
    from tests.dialect_reference.elementwise import ihardswish, requantized_ihardswish

    three, six, one_over_six = 3 * unit, 6 * unit, round(1024 / 6)
    chosen = calibrate(ihardswish(c.values[x], one_over_six, three, six))
    shift = chosen.div.bit_length() - 1
    value = requantized_ihardswish(c.values[x], chosen.mul, chosen.add, shift, one_over_six, three, six)
    c.node("RequantizediHardswish", [x], output, value, one_over_six=one_over_six, three=three, six=six,
           mul=chosen.mul, add=chosen.add, shift=shift)
    c.ranges[output] = (-128, 127)
    return output


def i_no_norm(c: Composer, x: str, output: str, rng: np.random.Generator) -> str:
    """iNoNorm with int8 weights and int32 biases of x's shape; mul and D chosen so the int8 result cannot wrap."""
    from tests.dialect_reference.elementwise import inonorm

    shape = c.values[x].shape
    w = rng.integers(-64, 64, shape).astype(np.int64)
    bias = rng.integers(-1024, 1024, shape).astype(np.int64)
    mul = 3
    bound = float(np.abs((np.asarray(c.values[x], np.int64) * w + bias) * mul).max())
    d = smallest_power_of_two(bound)
    value = inonorm(c.values[x], w, bias, d, mul)
    c.node("iNoNorm", [x, c.constant(f"{output}_weights", w), c.constant(f"{output}_bias", bias)], output, value,
           D=float(d), mul=mul, n_levels=256)
    c.ranges[output] = (-128, 127)
    return output


def requantized_add(c: Composer, a: str, b: str, output: str) -> str:
    """RequantizedAdd: both inputs brought to a common scale (b's weighs half of a's), the sum back to int8."""
    from tests.dialect_reference.elementwise import RequantSpec, requantized_add as reference

    rqs1, rqs2 = RequantSpec(mul=64, add=0, div=64), RequantSpec(mul=64, add=32, div=128)
    total = rqs1.apply(c.values[a]) + rqs2.apply(c.values[b])
    calibrated = calibrate(total)
    rqs_out = RequantSpec(mul=calibrated.mul, add=calibrated.add, div=calibrated.div)
    c.node("RequantizedAdd", [a, b], output, reference(c.values[a], c.values[b], rqs1, rqs2, rqs_out),
           **rqs1.attributes("rqs1"), **rqs2.attributes("rqs2"), **rqs_out.attributes("rqsOut"))
    c.ranges[output] = (-128, 127)
    return output


def rq_integer_div(c: Composer, a: str, b: str, output: str, delta: int = 256, eps: int = 1, eta: int = 4) -> str:
    """RQIntegerDiv(A, B, mul, add, shift): Deeploy's fused division, requantisation calibrated on the quotient."""
    from tests.dialect_reference.elementwise import integer_div, rq_integer_div as reference

    chosen = calibrate(integer_div(c.values[a], c.values[b], delta, eps, eta))
    shift = chosen.div.bit_length() - 1
    parameters = [c.constant(f"{output}_{name}", np.array([value]))
                  for name, value in (("mul", chosen.mul), ("add", chosen.add), ("div", shift))]
    value = reference(c.values[a], c.values[b], chosen.mul, chosen.add, shift, delta, eps, eta)
    c.node("RQIntegerDiv", [a, b, *parameters], output, value, Delta=delta, eps=eps, eta=eta, div=float(chosen.div),
           n_levels=256, signed=1)
    c.ranges[output] = (-128, 127)
    return output


# -- Deeploy's fused linear ops ------------------------------------------------------------------------------------

def rq_matmul(c: Composer, x: str, b: str, output: str) -> str:
    """RQMatMul(A, B, add, mul): the MatMul and its requantisation as one node, calibrated on the product."""
    from tests.dialect_reference.basic import matmul
    from tests.dialect_reference.linear import rq_matmul as reference

    chosen = calibrate(matmul(c.values[x], c.values[b]))
    add, mul = c.constant(f"{output}_add", np.array(chosen.add)), c.constant(f"{output}_mul", np.array(chosen.mul))
    value = reference(c.values[x], c.values[b], np.array(chosen.add), np.array(chosen.mul), chosen.div)
    c.node("RQMatMul", [x, b, add, mul], output, value, **chosen.attributes())
    c.ranges[output] = (-128, 127)
    return output


def rq_gemm(c: Composer, x: str, width: int, output: str, rng: np.random.Generator) -> str:
    """RQGemm(A, B, C, add, mul) with B stored transposed ([width, K], transB = 1) as Deeploy's PULP targets do."""
    from tests.dialect_reference.basic import gemm
    from tests.dialect_reference.linear import rq_gemm as reference

    w = weights(rng, (width, c.values[x].shape[-1]))
    bias = rng.integers(-2000, 2000, width)
    chosen = calibrate(gemm(c.values[x], w, bias, trans_b=True))
    inputs = [x, c.constant(f"{output}_w", w), c.constant(f"{output}_b", bias),
              c.constant(f"{output}_add", np.array(chosen.add)), c.constant(f"{output}_mul", np.array(chosen.mul))]
    value = reference(c.values[x], w, bias, np.array(chosen.add), np.array(chosen.mul), chosen.div, trans_b=True)
    c.node("RQGemm", inputs, output, value, transB=1, **chosen.attributes())
    c.ranges[output] = (-128, 127)
    return output


def rq_projection(c: Composer, x: str, width: int, output: str, rng: np.random.Generator) -> str:
    """x @ W as one RQMatMul node (the fused form a Deeploy PULP export carries)."""
    w = c.constant(f"{output}_w", weights(rng, (c.values[x].shape[-1], width)))
    return rq_matmul(c, x, w, output)


def requantized_i_gelu(c: Composer, x: str, output: str, b: int = -40, one: int = 1743) -> str:
    """RequantizediGELU(x, mul, add, shift), Deeploy's fused form as a model carries it, calibrated on the iGELU."""
    from tests.dialect_reference.elementwise import igelu, requantized_igelu

    chosen = calibrate(igelu(c.values[x], b, one))
    shift = chosen.div.bit_length() - 1
    parameters = [c.constant(f"{output}_{name}", np.array([value]))
                  for name, value in (("mul", chosen.mul), ("add", chosen.add), ("shift", shift))]
    value = requantized_igelu(c.values[x], chosen.mul, chosen.add, shift, b, one)
    c.node("RequantizediGELU", [x, *parameters], output, value, b=b, one=one)
    c.ranges[output] = (-128, 127)
    return output
