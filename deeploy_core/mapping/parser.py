"""Node parsers: from an ONNX node to the operator representation a template renders.

A parser only reads; it never changes the graph or the context.  What it
cannot handle it reports with :class:`NodeMismatch`, naming the attribute or
shape at fault, so that the user's error report is specific.
"""

from __future__ import annotations

import abc
from typing import Any

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.ir import Buffer, NetworkContext
from deeploy_core.mapping.mismatch import NodeMismatch

OperatorRepresentation = dict[str, Any]


class NodeParser(abc.ABC):
    """Reads one kind of node.  Subclasses implement :meth:`parse`."""

    #: (minimum, maximum) number of inputs and outputs accepted; None = unbounded.
    inputs: tuple[int, int | None] = (1, 1)
    outputs: tuple[int, int | None] = (1, 1)

    def __call__(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        self._check_arity(node)
        representation = self.parse(node, ctxt)
        representation.setdefault("node_name", node.name)
        return representation

    @abc.abstractmethod
    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        """The operator representation of ``node`` (raise :class:`NodeMismatch` if unsupported)."""

    def count_ops(self, representation: OperatorRepresentation) -> int:
        """Arithmetic operations of one inference (a MAC counts as two); default: one per output element."""
        return int(representation.get("macs", 0)) * 2 or int(representation.get("size", 0))

    def describe(self) -> str:
        """Constraints of this parser for ``supported-ops``."""
        return (self.__doc__ or "").strip().splitlines()[0] if self.__doc__ else ""

    # The helpers every parser needs, as members so that a plugin reaches them through the class it subclasses
    # (``NodeParser.attribute(node, "axis", 0)``) and the plugin API stays one name for the whole parser kit.
    @staticmethod
    def attribute(node: gs.Node, name: str, default: Any = None) -> Any:
        """An attribute value with numpy/graphsurgeon types turned into plain Python (``default`` when absent)."""
        return attribute(node, name, default)

    @staticmethod
    def constant_values(ctxt: NetworkContext, tensor: gs.Tensor, what: str) -> np.ndarray:
        """The values of a constant input; a runtime tensor there is a shape mismatch naming ``what``."""
        return constant_values(ctxt, tensor, what)

    @staticmethod
    def is_present(node: gs.Node, index: int) -> bool:
        """Whether optional input ``index`` is given (ONNX marks absent inputs with an empty name)."""
        return is_present(node, index)

    def _check_arity(self, node: gs.Node) -> None:
        present_inputs = len(node.inputs)
        for label, count, (low, high) in (("inputs", present_inputs, self.inputs), ("outputs", len(node.outputs), self.outputs)):
            if count < low or (high is not None and count > high):
                expected = f"{low}" if low == high else f"{low}..{high if high is not None else 'n'}"
                raise NodeMismatch("shape", f"{count} {label}, expected {expected}")


# -- helpers shared by parsers -----------------------------------------------------------------------


def attribute(node: gs.Node, name: str, default: Any = None) -> Any:
    """An attribute value with numpy/graphsurgeon types turned into plain Python."""
    value = node.attrs.get(name, default)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [item.item() if isinstance(item, np.generic) else item for item in value]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def buffer_of(ctxt: NetworkContext, tensor: gs.Tensor) -> Buffer:
    """The context buffer of a graph tensor."""
    return ctxt[tensor.name]


def constant_values(ctxt: NetworkContext, tensor: gs.Tensor, what: str) -> np.ndarray:
    """The values of a constant input; a runtime tensor there is a shape mismatch."""
    buffer = ctxt[tensor.name]
    if buffer.values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    return buffer.values


def is_present(node: gs.Node, index: int) -> bool:
    """Whether optional input ``index`` is given (ONNX marks absent inputs with an empty name)."""
    return len(node.inputs) > index and bool(node.inputs[index].name)
