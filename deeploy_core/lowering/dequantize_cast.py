"""``Cast(int → float) [→ Sub(zero point)] → Mul(scale)`` on an integer tensor becomes ``DequantizeLinear``.

``tf2onnx --tflite --dequantize`` keeps a TFLite model's int8 input and writes
its dequantisation with plain arithmetic: ``Cast`` to float32, ``Sub`` of the
zero point, ``Mul`` by the scale.  Platforms have no kernel for a Cast from
integers to float, but they have one for ``DequantizeLinear``, which computes
``(x - zero_point) * scale`` in float32.  For 8- and 16-bit integers the two
are the same number: the cast and the subtraction of an integral zero point
are exact in float32 (|x - zp| < 2^24), so only the final multiplication
rounds, in both.  The rewrite therefore applies only when that holds:

* the Cast reads int8, uint8, int16 or uint16 and writes float32 (int32 is
  not exact in float32, so its Cast stays, and stays unsupported);
* the zero point (absent: 0) is a one-element float32 constant holding an
  integer in the input type's range, subtracted from the cast (``zp - x``
  is another computation);
* the scale is a one-element float32 constant, positive and finite, on
  either side of the Mul;
* neither constant has more dimensions than the input (broadcasting would
  then change the output's rank), and the Cast's and Sub's outputs feed
  nothing else (the float copy would still be needed).

Any other Cast from integers to float is left alone.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import onnx_graphsurgeon as gs
from onnx import TensorProto

from deeploy_core.lowering.graph_edits import constant_value
from deeploy_core.passes import Modifies, Subgraph, SubgraphTransformation

EXACT_INPUTS = (np.dtype(np.int8), np.dtype(np.uint8), np.dtype(np.int16), np.dtype(np.uint16))
"""Integer types whose every value, minus any zero point of the same type, is exact in float32."""


def _sole_consumer(graph: gs.Graph, node: gs.Node) -> gs.Node | None:
    """The only node reading ``node``'s single output (not a graph output), or None."""
    if len(node.outputs) != 1 or any(node.outputs[0] is output for output in graph.outputs):
        return None
    consumers = {id(consumer): consumer for consumer in node.outputs[0].outputs}
    return next(iter(consumers.values())) if len(consumers) == 1 else None


def _scalar(tensor: gs.Tensor, rank: int) -> float | None:
    """The value of a one-element float32 constant of at most ``rank`` dimensions, or None."""
    values = constant_value(tensor)  # a Constant node's too: the pass runs before constant folding
    if values is None:
        return None
    if values.dtype != np.float32 or values.size != 1 or values.ndim > rank:
        return None
    return float(values.reshape(()))


def _other(node: gs.Node, tensor: gs.Tensor) -> gs.Tensor | None:
    """The input of the two-input ``node`` that is not ``tensor`` (None when both or neither are)."""
    if len(node.inputs) != 2:
        return None
    first, second = node.inputs
    if first is tensor and second is not tensor:
        return second
    if second is tensor and first is not tensor:
        return first
    return None


class CastToDequantizeLinear(SubgraphTransformation[gs.Graph]):
    """Rewrite ``Cast → [Sub →] Mul`` dequantisations into ``DequantizeLinear`` (see the module docstring)."""

    def modifies(self) -> Modifies:
        return Modifies.Nodes | Modifies.Edges | Modifies.Tensors

    def find_candidates(self, graph: gs.Graph) -> Iterator[Subgraph]:
        for cast in list(graph.nodes):
            if cast.op != "Cast" or cast.domain not in (None, "", "ai.onnx"):
                continue
            following = _sole_consumer(graph, cast)
            if following is not None and following.op == "Sub":
                mul = _sole_consumer(graph, following)
                if mul is not None and mul.op == "Mul":
                    yield Subgraph((cast, following, mul))
            elif following is not None and following.op == "Mul":
                yield Subgraph((cast, following))

    def _parameters(self, subgraph: Subgraph) -> tuple[np.generic, np.float32] | None:
        """(zero point in the input's type, scale) when the chain is an exact dequantisation, else None."""
        cast, *middle, mul = subgraph.nodes
        source = cast.inputs[0] if len(cast.inputs) == 1 else None
        if source is None or source.dtype is None or source.shape is None:
            return None
        dtype = np.dtype(source.dtype)
        if dtype not in EXACT_INPUTS or cast.attrs.get("to") != TensorProto.FLOAT:
            return None
        rank = len(source.shape)
        zero = 0.0
        before_mul = cast.outputs[0]
        if middle:
            [sub] = middle
            if len(sub.inputs) != 2 or sub.inputs[0] is not cast.outputs[0]:
                return None
            found = _scalar(sub.inputs[1], rank)
            limits = np.iinfo(dtype)
            if found is None or not found.is_integer() or not limits.min <= found <= limits.max:
                return None
            zero = found
            before_mul = sub.outputs[0]
        scale_tensor = _other(mul, before_mul)
        scale = _scalar(scale_tensor, rank) if scale_tensor is not None else None
        if scale is None or not math.isfinite(scale) or scale <= 0.0:
            return None
        return dtype.type(int(zero)), np.float32(scale)

    def can_be_applied(self, graph: gs.Graph, subgraph: Subgraph) -> bool:
        return self._parameters(subgraph) is not None

    def apply(self, graph: gs.Graph, subgraph: Subgraph) -> None:
        parameters = self._parameters(subgraph)
        assert parameters is not None, "can_be_applied checked it"
        zero, scale = parameters
        cast, mul = subgraph.nodes[0], subgraph.nodes[-1]
        name = cast.name or f"{cast.inputs[0].name}_dequantize"
        output = mul.outputs[0]
        mul.outputs.clear()
        graph.nodes.append(gs.Node(
            "DequantizeLinear", name=name,
            inputs=[cast.inputs[0], gs.Constant(f"{name}_scale", np.array(scale, np.float32)),
                    gs.Constant(f"{name}_zero_point", np.array(zero, zero.dtype))],
            outputs=[output]))
