"""Hypothesis strategies for random valid float32 ONNX graphs: chains of layers with small branches.

A graph starts from one input (an image ``[N, C, H, W]``, a sequence
``[N, C, L]`` or a matrix ``[N, F]``) and applies a chain of layers; some
steps fork into two short branches joined again by Add, Mul or Concat (a
residual block, an inception-like block).  Now and then an intermediate tensor
is also a graph output, so the memory planner has to keep it alive.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import onnx
from hypothesis import strategies as st

from deeploy_core.testing.fuzz.builder import GraphBuilder, Tensor
from deeploy_core.testing.fuzz.layers import (
    MAX_CHANNELS,
    MAX_NUMEL,
    SINGLE_LAYERS,
    Layer,
    binary_constant,
    divisors,
    unary,
)


@dataclass(frozen=True)
class FuzzGraph:
    """A generated model and what it exercises."""

    model: onnx.ModelProto
    flavour: str
    """``float``, ``qdq`` (compiled in exact mode) or ``qdq-fixed`` (compiled in fixed-point mode)."""
    seed: int
    """Seeds the constants and the input data."""
    features: tuple[tuple[str, int], ...] = ()

    @property
    def ops(self) -> Counter[str]:
        """Node count per operator type."""
        return Counter(node.op_type for node in self.model.graph.node)

    def inputs(self) -> dict[str, np.ndarray]:
        """Deterministic input data: standard normal floats, integers over their whole range."""
        from deeploy_core.validate.data import graph_input_specs

        rng = np.random.default_rng(self.seed + 1)
        data = {}
        for name, dtype, shape in graph_input_specs(self.model):
            if np.issubdtype(dtype, np.integer):
                info = np.iinfo(dtype)
                data[name] = rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)
            else:
                data[name] = rng.standard_normal(shape).astype(dtype)
        return data

    def describe(self) -> str:
        """One line per node: op, inputs, outputs, attributes (for failure reports)."""
        lines = []
        for node in self.model.graph.node:
            printed = onnx.helper.printable_node(node)  # (text, subgraphs) only when asked for subgraphs=True
            lines.append(printed if isinstance(printed, str) else printed[0])
        return "\n".join(lines)


@st.composite
def input_shapes(draw: st.DrawFn) -> tuple[int, ...]:
    """An image, a sequence or a matrix, small in every dimension (dims of 1 included)."""
    kind = draw(st.sampled_from(["image", "sequence", "matrix"]))
    batch = draw(st.integers(1, 2))
    if kind == "image":
        return batch, draw(st.integers(1, 6)), draw(st.integers(1, 8)), draw(st.integers(1, 8))
    if kind == "sequence":
        return batch, draw(st.integers(1, 6)), draw(st.integers(1, 16))
    return draw(st.integers(1, 4)), draw(st.integers(1, 24))


def _same_conv(draw: st.DrawFn, b: GraphBuilder, t: Tensor, out_channels: int) -> Tensor:
    """A stride-1 Conv that keeps the spatial size (odd kernel, symmetric pads, maybe dilated)."""
    channels, spatial = t.shape[1], t.shape[2:]
    group = draw(st.sampled_from([g for g in divisors(channels) if out_channels % g == 0]))
    kernel = draw(st.sampled_from([1, 3]))
    dilation = draw(st.sampled_from([1, 2])) if kernel > 1 else 1
    pad = dilation * (kernel - 1) // 2
    kernel_shape = [kernel] * len(spatial)
    weights = b.weights((out_channels, channels // group, *kernel_shape), channels // group * kernel ** len(spatial))
    b.note("branch:conv")
    return b.node("Conv", [t, weights], kernel_shape=kernel_shape, pads=[pad] * 2 * len(spatial),
                  dilations=[dilation] * len(spatial), group=group)


def _same_pool(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """A 3-wide, stride-1, 1-padded pool: the shape is kept, the edge windows are partly padding."""
    op = draw(st.sampled_from(["MaxPool", "AveragePool"]))
    rank = t.rank - 2
    b.note("branch:pool")
    return b.node(op, [t], kernel_shape=[3] * rank, strides=[1] * rank, pads=[1] * 2 * rank)


def branch_side(draw: st.DrawFn, b: GraphBuilder, t: Tensor, out_channels: int | None) -> Tensor:
    """0 to 2 layers that keep the shape of ``t``, except axis 1 which becomes ``out_channels`` if given."""
    steps = draw(st.integers(0, 2))
    spatial = t.rank in (3, 4)
    for step in range(steps):
        last = step == steps - 1
        choices = ["unary", "binary"] + (["pool"] if spatial else []) + (["conv"] if spatial else [])
        choice = draw(st.sampled_from(choices))
        if choice == "conv" or (last and spatial and out_channels not in (None, t.shape[1])):
            t = _same_conv(draw, b, t, out_channels or t.shape[1])
        elif choice == "pool":
            t = _same_pool(draw, b, t)
        elif choice == "binary":
            t = binary_constant(draw, b, t, may_expand=False)
        else:
            t = unary(draw, b, t)
    if spatial and out_channels not in (None, t.shape[1]):
        t = _same_conv(draw, b, t, out_channels)
    return t


def branch(draw: st.DrawFn, b: GraphBuilder, t: Tensor) -> Tensor:
    """Two branches from ``t`` joined again: Add/Mul of equal shapes, or Concat (channels may differ)."""
    join = draw(st.sampled_from(["Add", "Concat", "Mul"]))
    channels: tuple[int | None, int | None] = (None, None)
    room = t.rank in (3, 4) and t.numel // t.shape[1] * 2 * MAX_CHANNELS <= MAX_NUMEL
    if join == "Concat" and room and draw(st.booleans()):
        channels = (draw(st.integers(1, MAX_CHANNELS)), draw(st.integers(1, MAX_CHANNELS)))
    left = branch_side(draw, b, t, channels[0])
    right = branch_side(draw, b, t, channels[1])
    b.note(f"branch:{join}")
    if join != "Concat":
        return b.node(join, [left, right])
    axis = 1 if left.shape != right.shape else draw(st.integers(-t.rank, t.rank - 1))
    return b.node("Concat", [left, right], axis=axis)


BRANCH = Layer("branch", branch, growth=2)


def applicable_layers(t: Tensor) -> list[Layer]:
    """The layers that can consume ``t`` without exceeding the size bound."""
    return [layer for layer in (*SINGLE_LAYERS, BRANCH) if layer.applies(t)]


@st.composite
def float_graphs(draw: st.DrawFn, max_layers: int = 6) -> FuzzGraph:
    """A float32 graph of 1 to ``max_layers`` layers (a branch counts as one)."""
    seed = draw(st.integers(0, 2**31 - 1))
    b = GraphBuilder(seed)
    t = b.input(draw(input_shapes()))
    outputs: list[Tensor] = []
    for _ in range(draw(st.integers(1, max_layers))):
        layer = draw(st.sampled_from(applicable_layers(t)))
        b.note(f"layer:{layer.name}")
        t = layer.build(draw, b, t)
        if draw(st.integers(0, 7)) == 0:
            outputs.append(t)
    if t not in outputs:
        outputs.append(t)
    if len(outputs) > 1:
        b.note("graph:several-outputs")
    if len(b.inputs) > 1:
        b.note("graph:several-inputs")
    return FuzzGraph(b.model(outputs), "float", seed, tuple(sorted(b.features.items())))

