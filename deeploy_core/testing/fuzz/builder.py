"""An ONNX graph built node by node, with every tensor's shape known as soon as its node is added.

The fuzzing strategies choose each layer's parameters from the shape of the
tensor it consumes, so the shape of a node's output must be known before the
next layer is drawn.  ONNX's own shape inference computes it (on a one-node
model, so a graph of *n* layers costs *n* small inferences rather than *n*
growing ones); the builder never re-implements an operator's shape rule.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 22
"""The opset of generated models.  Not 21: up to opset 21, ONNX's shape inference keeps a ``ceil_mode`` pooling
window that starts in the end padding, which the operator's definition (and ONNX Runtime) drop, so the declared
shapes would contradict the reference.  The compiler converts every model to its canonical opset anyway."""


class InvalidGraphError(AssertionError):
    """The strategy built a node ONNX rejects: a bug of the strategy, never of the compiler under test."""


@dataclass(frozen=True)
class Tensor:
    """A float tensor of the graph under construction."""

    name: str
    shape: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class GraphBuilder:
    """Collects nodes, constants and graph inputs; ``seed`` makes the constants' values reproducible.

    Constant values come from a NumPy generator rather than from hypothesis
    draws: drawing thousands of weights one by one would make every example
    slow and their shrinking pointless (the structure is what matters).
    """

    seed: int
    nodes: list[onnx.NodeProto] = field(default_factory=list)
    initializers: dict[str, onnx.TensorProto] = field(default_factory=dict)
    inputs: list[onnx.ValueInfoProto] = field(default_factory=list)
    features: Counter[str] = field(default_factory=Counter)
    """Named parameter choices (``Conv:depthwise``, ``MaxPool:ceil``, …) for coverage reports."""

    def __post_init__(self) -> None:
        self.rng = np.random.default_rng(self.seed)
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._counter = 0

    def fresh(self, stem: str) -> str:
        """A name not used yet in this graph."""
        self._counter += 1
        return f"{stem}_{self._counter}"

    def note(self, *features: str) -> None:
        self.features.update(features)

    def input(self, shape: tuple[int, ...], stem: str = "x") -> Tensor:
        """A new float32 graph input."""
        name = self.fresh(stem)
        self.inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape)))
        self._shapes[name] = tuple(shape)
        return Tensor(name, tuple(shape))

    def constant(self, values: np.ndarray, stem: str) -> str:
        """An initializer holding ``values`` (its dtype kept)."""
        name = self.fresh(stem)
        self.initializers[name] = numpy_helper.from_array(np.ascontiguousarray(values), name)
        return name

    def existing_constant(self, shape: tuple[int, ...]) -> str | None:
        """The first float32 constant of ``shape`` made so far (to share one constant between nodes), or None."""
        for name, tensor in self.initializers.items():
            if tensor.data_type == TensorProto.FLOAT and tuple(tensor.dims) == shape:
                return name
        return None

    def weights(self, shape: tuple[int, ...], fan_in: int, stem: str = "w") -> str:
        """Float weights of variance ``1 / fan_in``: activations keep their magnitude through a chain of layers."""
        values = self.rng.standard_normal(shape) / math.sqrt(max(fan_in, 1))
        return self.constant(values.astype(np.float32), stem)

    def values(self, shape: tuple[int, ...], low: float, high: float, stem: str = "c") -> str:
        """Float constants drawn uniformly from ``[low, high)``."""
        return self.constant(self.rng.uniform(low, high, shape).astype(np.float32), stem)

    def node(self, op: str, inputs: list[str | Tensor], **attributes: object) -> Tensor:
        """Append ``op`` with a fresh output; its shape comes from ONNX shape inference."""
        names = [item.name if isinstance(item, Tensor) else item for item in inputs]
        output = self.fresh(op.lower())
        node = helper.make_node(op, names, [output], name=self.fresh(f"n_{op.lower()}"))
        node.attribute.extend(helper.make_attribute(key, value) for key, value in sorted(attributes.items())
                              if value is not None)
        shape = self._infer(node)
        self.nodes.append(node)
        self._shapes[output] = shape
        return Tensor(output, shape)

    def _infer(self, node: onnx.NodeProto) -> tuple[int, ...]:
        variables = [name for name in node.input if name and name not in self.initializers]
        graph = helper.make_graph(
            [node], "infer",
            [helper.make_tensor_value_info(name, TensorProto.FLOAT, list(self._shapes[name])) for name in variables],
            [], [self.initializers[name] for name in node.input if name in self.initializers],
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        try:
            inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        except Exception as error:  # noqa: BLE001 - onnx raises several error types for a bad node
            raise InvalidGraphError(f"{node.op_type} {dict(_attributes(node))}: {error}") from error
        (value,) = [v for v in inferred.graph.value_info if v.name == node.output[0]] or [None]
        dims = value.type.tensor_type.shape.dim if value is not None else []
        shape = tuple(dim.dim_value for dim in dims)
        if value is None or any(not dim.HasField("dim_value") or dim.dim_value < 1 for dim in dims):
            raise InvalidGraphError(f"{node.op_type} {dict(_attributes(node))}: output shape {shape} not positive")
        return shape

    def model(self, outputs: list[Tensor], name: str = "fuzz") -> onnx.ModelProto:
        """The finished model, checked by ``onnx.checker`` (full check, shapes included)."""
        graph = helper.make_graph(
            self.nodes, name, self.inputs,
            [helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.shape)) for t in outputs],
            list(self.initializers.values()),
        )
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
        onnx.checker.check_model(model, full_check=True)
        return model


def _attributes(node: onnx.NodeProto) -> list[tuple[str, object]]:
    return [(a.name, helper.get_attribute_value(a)) for a in node.attribute]
