"""The parser behind the typed element-wise families: reads each operand into a local of its own C type once,
then stores one expression of those locals, over the numpy-broadcast iteration space.

Why locals: an expression such as a guarded division names its operands
several times; reading each element once keeps the loop body one memory stream
per operand (as ``binary_loop`` does), whatever the expression.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    DataType,
    NetworkContext,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTemplate,
    NodeTypeChecker,
    OperatorRepresentation,
)
from deeploy_generic_c.kernels.broadcast_nary import broadcast_loop
from deeploy_generic_c.parsing.common import HEADERS, MAX_DIMS, single_binding

CALL_WITH_MATH = NodeTemplate("${call}", headers=HEADERS + ("math.h",))


class TypedElementwiseParser(NodeParser):
    """Element-wise over numpy-broadcast operands of the types the model declares."""

    inputs: tuple[int, int | None] = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        operands = [ctxt[tensor.name] for tensor in node.inputs if tensor.name]
        y = ctxt[node.outputs[0].name]
        if len(y.shape) > MAX_DIMS:
            raise NodeMismatch("shape", f"rank {len(y.shape)} exceeds {MAX_DIMS}")
        types = [operand.dtype for operand in operands]
        names = [f"v{index}" for index in range(len(operands))]
        body = self.body(node, types, y.dtype, names, "out")

        def statement(target: str, reads: Sequence[str]) -> str:
            loads = " ".join(f"const {dtype.c_type} {name} = {read};" for dtype, name, read in zip(types, names, reads))
            return f"{{ {loads} {y.dtype.c_type} out; {body} {target} = out; }}"

        call = broadcast_loop(statement, [(operand.c_name, tuple(operand.shape)) for operand in operands],
                              y.c_name, tuple(y.shape))
        return {"call": call, "size": y.numel}

    def body(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str], target: str) -> str:
        """The C statements that set ``target`` (of type ``out``) from the operand locals ``values``."""
        return f"{target} = {self.expression(node, types, out, values)};"

    @abc.abstractmethod
    def expression(self, node: gs.Node, types: Sequence[DataType], out: DataType, values: Sequence[str]) -> str:
        """The C expression of one output element (of type ``out``)."""


def typed_mapper(parser: NodeParser, checker: NodeTypeChecker, name: str) -> tuple[NodeMapper, ...]:
    """The table entry of a typed element-wise op (math.h included: float kernels call it)."""
    return single_binding(parser, checker, name, CALL_WITH_MATH)
