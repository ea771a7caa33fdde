"""Where a quantised island starts and ends: DequantizeLinear inputs → op → [bias] → [activation] → Q → [Clip].

Exporters write one quantised layer in several shapes:

* ONNX Runtime's quantizer: ``DQ → op → Q``;
* tf2onnx (TFLite int8): the fused activation sits between the op and its
  QuantizeLinear (``DQ → Conv → Relu → Q``), and a Dense layer is
  ``DQ → MatMul → Add(DQ int32 bias) → [Relu] → Q``;
* Brevitas' QCDQ: an integer ``Clip`` after the QuantizeLinear narrows the
  range (4-bit activations, narrow range).

This module only *finds* those chains (:class:`Island`) and answers questions
about their Q/DQ parameters; :mod:`deeploy_core.lowering.qdq` decides what to
rewrite them into.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx_graphsurgeon as gs

ACTIVATIONS = frozenset({"Relu", "Clip"})
"""Float ops between a layer and its QuantizeLinear that a clamp of the quantised output reproduces exactly."""


def producer(tensor: gs.Tensor, op: str) -> gs.Node | None:
    """The node of type ``op`` that alone produces ``tensor`` (None for constants, graph inputs, other ops)."""
    if isinstance(tensor, gs.Constant) or len(tensor.inputs) != 1 or tensor.inputs[0].op != op:
        return None
    return tensor.inputs[0]


def sole_consumer(tensor: gs.Tensor, graph: gs.Graph) -> gs.Node | None:
    """The only node reading ``tensor``, when it is not also a graph output."""
    if tensor in graph.outputs or len(tensor.outputs) != 1:
        return None
    return tensor.outputs[0]


def parameters(node: gs.Node) -> tuple[np.ndarray, np.ndarray] | None:
    """(scale, zero point) of a Q/DQ node, or None when they are not constants (zero point absent → uint8 0)."""
    if len(node.inputs) < 2 or not isinstance(node.inputs[1], gs.Constant):
        return None
    if len(node.inputs) > 2 and node.inputs[2].name and not isinstance(node.inputs[2], gs.Constant):
        return None
    scale = np.asarray(node.inputs[1].values)
    zero = np.asarray(node.inputs[2].values) if len(node.inputs) > 2 and node.inputs[2].name else np.zeros((), np.uint8)
    return scale, zero


def per_tensor(node: gs.Node) -> bool:
    """One scale and one zero point."""
    found = parameters(node)
    return found is not None and all(p.size == 1 for p in found)


def same_quantisation(a: gs.Node, b: gs.Node) -> bool:
    """Both per tensor with equal scale, zero point and integer type: a value passes between them unchanged."""
    pa, pb = parameters(a), parameters(b)
    return (pa is not None and pb is not None and per_tensor(a) and per_tensor(b)
            and np.array_equal(pa[0], pb[0]) and np.array_equal(pa[1], pb[1]) and pa[1].dtype == pb[1].dtype)


def dequantized_inputs(node: gs.Node) -> list[gs.Node | None]:
    """The DequantizeLinear producing each input of ``node`` (None for absent or other inputs)."""
    return [producer(t, "DequantizeLinear") if t.name else None for t in node.inputs]


def constant_bounds(clip: gs.Node) -> tuple[float | None, float | None] | None:
    """(min, max) of a Clip whose bounds are constants or attributes (None: a bound is computed at run time)."""
    if "min" in clip.attrs or "max" in clip.attrs:  # opset < 11
        low, high = clip.attrs.get("min"), clip.attrs.get("max")
        return (None if low is None else float(low), None if high is None else float(high))
    bounds: list[float | None] = []
    for index in (1, 2):
        if len(clip.inputs) <= index or not clip.inputs[index].name:
            bounds.append(None)
        elif isinstance(clip.inputs[index], gs.Constant):
            bounds.append(float(np.asarray(clip.inputs[index].values).reshape(-1)[0]))
        else:
            return None
    return bounds[0], bounds[1]


@dataclass(frozen=True, eq=False)
class Island:
    """One quantised layer as written: its op and the nodes between the op and its quantised output."""

    node: gs.Node
    """The float op (Conv, MatMul, Add, Softmax, …)."""
    quantize: gs.Node
    """The QuantizeLinear of the layer's output."""
    bias_add: gs.Node | None = None
    """tf2onnx's Dense: the Add of a dequantised int32 bias after a MatMul."""
    activation: gs.Node | None = None
    """A Relu or Clip between the op (or its bias Add) and the QuantizeLinear."""
    clip: gs.Node | None = None
    """QCDQ's integer Clip after the QuantizeLinear."""

    @property
    def nodes(self) -> tuple[gs.Node, ...]:
        """Every node of the island, the op and its QuantizeLinear first (the pattern order of the rewrite)."""
        return tuple(n for n in (self.node, self.quantize, self.bias_add, self.activation, self.clip) if n is not None)

    @property
    def output(self) -> gs.Tensor:
        """The island's quantised output tensor (after the QCDQ Clip when there is one)."""
        return (self.clip or self.quantize).outputs[0]

    @property
    def bias_dequantize(self) -> gs.Node | None:
        """The DequantizeLinear of the bias an Add contributes to a MatMul (None without such an Add)."""
        if self.bias_add is None:
            return None
        other = [t for t in self.bias_add.inputs if t is not self.node.outputs[0]]
        return producer(other[0], "DequantizeLinear") if len(other) == 1 else None


def find_island(node: gs.Node, graph: gs.Graph, absorb_clip: bool = True) -> Island | None:
    """The island that ``node`` starts, when its output reaches a QuantizeLinear through the shapes above."""
    if len(node.outputs) != 1:
        return None
    tensor, bias_add, activation = node.outputs[0], None, None
    follower = sole_consumer(tensor, graph)
    if follower is not None and node.op == "MatMul" and follower.op == "Add" and len(follower.outputs) == 1:
        bias_add, tensor = follower, follower.outputs[0]
        follower = sole_consumer(tensor, graph)
    if follower is not None and follower.op in ACTIVATIONS and follower.inputs[0] is tensor and len(follower.outputs) == 1:
        if follower.op == "Relu" or constant_bounds(follower) is not None:
            activation, tensor = follower, follower.outputs[0]
            follower = sole_consumer(tensor, graph)
    if follower is None or follower.op != "QuantizeLinear" or follower.inputs[0] is not tensor:
        return None
    clip = sole_consumer(follower.outputs[0], graph) if absorb_clip else None
    if clip is not None and (clip.op != "Clip" or clip.inputs[0] is not follower.outputs[0]
                             or constant_bounds(clip) is None):
        clip = None
    return Island(node, follower, bias_add, activation, clip)
