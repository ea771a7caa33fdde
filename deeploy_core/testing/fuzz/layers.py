"""The layers of a fuzzed graph: each draws its parameters from the shape of the tensor it consumes.

A layer is a function ``(draw, builder, tensor) -> tensor`` that appends one
or a few nodes.  Parameters are drawn so that the result is always a valid
ONNX node that ONNX Runtime runs; which parameter combinations are drawn at
all follows what the generic C platform says it supports (``deeploy-core
supported-ops``).  Sizes stay small: the point is to cover combinations of
shapes and attributes, not to stress memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from hypothesis import strategies as st

from deeploy_core.testing.fuzz.builder import GraphBuilder, Tensor
from deeploy_core.testing.fuzz.windows import window_attributes

MAX_NUMEL = 1024
"""No layer makes a tensor larger than this many elements (4 KiB of float32)."""
MAX_CHANNELS = 8
MAX_FEATURES = 12

UNARY_OPS = ("Relu", "Sigmoid", "Tanh", "LeakyRelu", "Clip")
BINARY_OPS = ("Add", "Mul", "Sub")

LayerFn = Callable[[st.DrawFn, GraphBuilder, Tensor], Tensor]


def divisors(n: int) -> list[int]:
    """The divisors of ``n``, ascending (the valid group counts of a convolution over ``n`` channels)."""
    return [d for d in range(1, n + 1) if n % d == 0]


def broadcast_shape(draw: st.DrawFn, shape: tuple[int, ...], expand: bool = False) -> tuple[int, ...]:
    """A shape that broadcasts against ``shape``: a suffix of it with some dims set to 1 (``()`` is a scalar).

    With ``expand``, dims where ``shape`` has 1 may be larger and a leading dim
    may be added, so the result of the broadcast is larger than ``shape`` (the
    variable operand is then the one that is broadcast).
    """
    kept = draw(st.integers(0, len(shape)))
    dims = []
    for size in shape[len(shape) - kept:]:
        if size == 1 and expand:
            dims.append(draw(st.integers(1, 3)))
        else:
            dims.append(size if draw(st.booleans()) else 1)
    if expand and kept == len(shape) < 4 and draw(st.booleans()):
        dims.insert(0, draw(st.integers(1, 2)))
    return tuple(dims)


def unary(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """An activation; Clip with both bounds or one of them (an absent bound is an empty input name)."""
    op = draw(st.sampled_from(UNARY_OPS))
    if op == "LeakyRelu":
        return b.node(op, [t], alpha=draw(st.sampled_from([0.01, 0.1, 0.5])))
    if op == "Clip":
        bounds = draw(st.sampled_from(["both", "min", "max"]))
        b.note(f"Clip:{bounds}")
        low = b.constant(np.array(draw(st.sampled_from([0.0, -1.0, -0.5])), np.float32), "clip_min") \
            if bounds != "max" else ""
        if bounds == "min":
            return b.node(op, [t, low])
        high = b.constant(np.array(draw(st.sampled_from([6.0, 1.0, 0.5])), np.float32), "clip_max")
        return b.node(op, [t, low, high])
    return b.node(op, [t])


def _operand(b: GraphBuilder, op: str, shape: tuple[int, ...]) -> str:
    """A constant operand; Mul's are ±[0.5, 1.5] so a chain of products neither vanishes nor explodes."""
    if op == "Mul":
        signs = np.where(b.rng.random(shape) < 0.2, -1.0, 1.0)
        return b.constant((b.rng.uniform(0.5, 1.5, shape) * signs).astype(np.float32), "scale")
    return b.values(shape, -1.0, 1.0, "offset")


def binary_constant(draw: st.DrawFn, b: GraphBuilder, t: Tensor, may_expand: bool = True) -> Tensor:
    """Add/Mul/Sub with a constant that broadcasts (on either side; ``may_expand``: the output may be larger)."""
    op = draw(st.sampled_from(BINARY_OPS))
    expand = may_expand and t.numel <= MAX_NUMEL // 3 and draw(st.integers(0, 4)) == 0
    shape = broadcast_shape(draw, t.shape, expand)
    shared = b.existing_constant(shape) if draw(st.integers(0, 3)) == 0 else None
    if shared is not None:
        b.note("constant:shared")
    constant = shared or _operand(b, op, shape)
    b.note(f"{op}:constant-rank{len(shape)}")
    if math.prod(shape) > 1 and math.prod(np.broadcast_shapes(shape, t.shape)) > t.numel:
        b.note(f"{op}:broadcasts-variable")
    operands: list[str | Tensor] = [constant, t] if draw(st.booleans()) else [t, constant]
    return b.node(op, operands)


def binary_input(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Add/Mul/Sub with a second graph input of a broadcast shape."""
    op = draw(st.sampled_from(BINARY_OPS))
    other = b.input(broadcast_shape(draw, t.shape), "x")
    b.note(f"{op}:graph-input")
    return b.node(op, [other, t] if draw(st.booleans()) else [t, other])


def conv_group(draw: st.DrawFn, channels: int) -> int:
    """1 (dense), ``channels`` (depthwise) or a divisor in between (grouped) when there is one."""
    kind = draw(st.sampled_from(["dense", "depthwise", "grouped"]))
    between = [d for d in divisors(channels) if 1 < d < channels]
    if kind == "grouped" and between:
        return draw(st.sampled_from(between))
    return 1 if kind == "dense" else channels


def conv(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """1-D or 2-D Conv: any groups (depthwise too), strides, pads, dilations, optional bias."""
    channels, spatial = t.shape[1], t.shape[2:]
    budget = max(1, min(MAX_CHANNELS, MAX_NUMEL // (t.shape[0] * math.prod(size + 4 for size in spatial))))
    group = conv_group(draw, channels)
    out_channels = group * draw(st.integers(1, max(1, budget // group)))
    attributes = window_attributes(draw, b, spatial, "Conv", dilations=True)
    kernel = attributes["kernel_shape"]
    if not isinstance(kernel, list):  # window_attributes draws the kernel as a list of ints, one per spatial axis
        raise TypeError(f"window_attributes gave kernel_shape {kernel!r}, expected a list")
    weights = b.weights((out_channels, channels // group, *kernel), channels // group * math.prod(kernel))
    inputs: list[str | Tensor] = [t, weights]
    if draw(st.booleans()):
        inputs.append(b.values((out_channels,), -0.5, 0.5, "bias"))
        b.note("Conv:bias")
    if group > 1:
        b.note("Conv:depthwise" if group == channels else "Conv:grouped")
    if group > 1 or draw(st.booleans()):
        attributes["group"] = group
    return b.node("Conv", inputs, **attributes)


def max_pool(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """1-D or 2-D MaxPool (strides, pads, dilations, ceil_mode, auto_pad)."""
    return b.node("MaxPool", [t], **window_attributes(draw, b, t.shape[2:], "MaxPool", dilations=True))


def average_pool(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """1-D or 2-D AveragePool, padding counted or not (``count_include_pad``); never dilated (not supported)."""
    attributes = window_attributes(draw, b, t.shape[2:], "AveragePool", dilations=False)
    if draw(st.booleans()):
        attributes["count_include_pad"] = 1
        b.note("AveragePool:count_include_pad")
    return b.node("AveragePool", [t], **attributes)


def global_pool(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """GlobalAveragePool or GlobalMaxPool over every spatial dimension."""
    return b.node(draw(st.sampled_from(["GlobalAveragePool", "GlobalMaxPool"])), [t])


def gemm(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Gemm on a 2-D tensor: transA/transB, alpha, beta, C absent or broadcast over rows/columns/both."""
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    m, k = (t.shape[1], t.shape[0]) if trans_a else t.shape
    n = draw(st.integers(1, max(1, min(MAX_FEATURES, MAX_NUMEL // m))))
    weights = b.weights((n, k) if trans_b else (k, n), k)
    attributes: dict[str, object] = {}
    if trans_a or draw(st.booleans()):
        attributes["transA"] = int(trans_a)
    if trans_b or draw(st.booleans()):
        attributes["transB"] = int(trans_b)
    if draw(st.integers(0, 3)) == 0:
        attributes["alpha"] = draw(st.sampled_from([0.5, 1.5, -1.0]))
    inputs: list[str | Tensor] = [t, weights]
    bias_shape = draw(st.sampled_from([None, (n,), (1, n), (m, 1), (m, n), (), (1,)]))
    if bias_shape is not None:
        inputs.append(b.values(bias_shape, -0.5, 0.5, "gemm_c"))
        b.note(f"Gemm:C-rank{len(bias_shape)}" + ("-column" if bias_shape == (m, 1) else ""))
        if draw(st.integers(0, 3)) == 0:
            attributes["beta"] = draw(st.sampled_from([0.5, 2.0]))
    b.note(*(f"Gemm:{name}" for name, value in attributes.items() if value not in (0, 1.0)))
    return b.node("Gemm", inputs, **attributes)


def matmul(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """MatMul by a constant matrix (on either side), a constant vector (1-D promotion), batched constants, or by
    itself transposed."""
    k = t.shape[-1]
    kinds = ["matrix"] + (["vector", "left", "self"] if t.rank >= 2 else []) + (["batched"] if t.rank >= 3 else [])
    kind = draw(st.sampled_from(kinds))
    b.note(f"MatMul:{kind}" + ("-1d-a" if t.rank == 1 else ""))
    if kind == "vector":
        return b.node("MatMul", [t, b.weights((k,), k)])
    rows = t.numel // k
    if kind == "left":
        m = draw(st.integers(1, max(1, min(MAX_FEATURES, MAX_NUMEL * t.shape[-2] // t.numel))))
        return b.node("MatMul", [b.weights((m, t.shape[-2]), t.shape[-2]), t])
    if kind == "self":
        if rows * max(t.shape[-2], k * k // t.shape[-2]) > MAX_NUMEL:
            kind = "matrix"
        else:
            perm = list(range(t.rank - 2)) + [t.rank - 1, t.rank - 2]
            other = b.node("Transpose", [t], perm=perm)
            return b.node("MatMul", [t, other] if draw(st.booleans()) else [other, t])
    n = draw(st.integers(1, max(1, min(MAX_FEATURES, MAX_NUMEL // rows))))
    batch = (broadcast_shape(draw, t.shape[:-2]) or t.shape[-3:-2]) if kind == "batched" else ()
    return b.node("MatMul", [t, b.weights((*batch, k, n), k)])


def transpose(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Any permutation, or none given (which reverses the dimensions)."""
    if draw(st.integers(0, 5)) == 0:
        b.note("Transpose:default-perm")
        return b.node("Transpose", [t])
    return b.node("Transpose", [t], perm=draw(st.permutations(range(t.rank))))


def _factors(n: int) -> list[int]:
    """Prime factors of ``n`` with repetition: distributing them over dims gives every shape of ``n`` elements."""
    found, factor = [], 2
    while n > 1:
        while n % factor == 0:
            found.append(factor)
            n //= factor
        factor += 1
    return found


def reshape(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Reshape to a random factorisation of the element count (rank 1 to 4), sometimes with -1 or 0 entries."""
    rank = draw(st.integers(1, 4))
    factors = _factors(t.numel)
    places = draw(st.lists(st.integers(0, rank - 1), min_size=len(factors), max_size=len(factors)))
    dims = [math.prod(f for f, place in zip(factors, places) if place == axis) for axis in range(rank)]
    spec = list(dims)
    if draw(st.integers(0, 3)) == 0:
        spec[draw(st.integers(0, rank - 1))] = -1
        b.note("Reshape:minus-one")
    copies = [axis for axis in range(min(rank, t.rank)) if spec[axis] == t.shape[axis]]
    if copies and draw(st.integers(0, 3)) == 0:
        spec[draw(st.sampled_from(copies))] = 0
        b.note("Reshape:zero")
    return b.node("Reshape", [t, b.constant(np.array(spec, np.int64), "shape")])


def flatten(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Flatten at any axis, negative ones and the two ends (a leading or trailing 1) included."""
    return b.node("Flatten", [t], axis=draw(st.integers(-t.rank, t.rank)))


def concat_self(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """The tensor concatenated with itself (2 or 3 times) along any axis, one copy maybe a constant instead."""
    copies = draw(st.integers(2, 3))
    axis = draw(st.integers(-t.rank, t.rank - 1))
    parts: list[str | Tensor] = [t] * copies
    if draw(st.integers(0, 3)) == 0:
        shape = list(t.shape)
        shape[axis] = draw(st.integers(1, 3))
        parts[draw(st.integers(0, copies - 1))] = b.values(tuple(shape), -1.0, 1.0, "concat_constant")
        b.note("Concat:constant")
    return b.node("Concat", parts, axis=axis)


@dataclass(frozen=True)
class Layer:
    """A layer kind and the tensors it applies to."""

    name: str
    build: LayerFn
    min_rank: int = 1
    max_rank: int = 4
    growth: int = 1
    """How many times larger the output may be than the input (checked against ``MAX_NUMEL``); layers that never
    grow (1) apply to any size, so a chain can always continue."""

    def applies(self, t: Tensor) -> bool:
        fits = self.growth == 1 or t.numel * self.growth <= MAX_NUMEL
        return self.min_rank <= t.rank <= self.max_rank and fits


SINGLE_LAYERS: tuple[Layer, ...] = (
    Layer("unary", unary),
    Layer("binary", binary_constant),
    Layer("conv", conv, 3, 4, growth=2),
    Layer("maxpool", max_pool, 3, 4, growth=2),
    Layer("avgpool", average_pool, 3, 4, growth=2),
    Layer("globalpool", global_pool, 3, 4),
    Layer("gemm", gemm, 2, 2),
    Layer("matmul", matmul, 1, 4),
    Layer("reshape", reshape),
    Layer("flatten", flatten),
    Layer("transpose", transpose, 2, 4),
    Layer("concat", concat_self, growth=4),
    Layer("graph-input", binary_input),
)
"""Layers that consume one tensor (the first is what hypothesis shrinks to)."""
