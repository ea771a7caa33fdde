"""Add, Sub and Mul with an integer operand: Deeploy's integer dialect and its mixed integer-float dequantisation.

The loop is emitted inline with the exact C types of its operands, so one template serves every combination of
int8/uint8/int16/int32 (and float) inputs; integer arithmetic is promoted to int32, as ``deeploy-op-semantics.md``
specifies.  The family tries it last for these op types: operands of one shared type take
:mod:`.typed_arithmetic` (which wraps in 64 bits too) and two float32 operands :mod:`.float32`, so this kernel
gets the layers that mix an integer with another type.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeMismatch, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.parsing.integer_bindings import ANY, integer_mapper

class IntegerBinaryParser(NodeParser):
    """Add, Sub, Mul with an integer operand, numpy broadcasting.

    Integer × integer is exact in int32; integer × float (a dequantisation
    ``(q - zp) * scale``) converts the integer to float32 and computes in float32.
    """

    inputs = (2, 2)
    SYMBOLS = {"Add": "+", "Sub": "-", "Mul": "*"}

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        a, b, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        if a.dtype.is_float and b.dtype.is_float:
            raise NodeMismatch("dtype", "both inputs are float; the integer kernel needs an integer operand")
        shape, strides = collapse_broadcast(y.shape, [broadcast_strides(a.shape, y.shape), broadcast_strides(b.shape, y.shape)])
        symbol = self.SYMBOLS[node.op]
        work = "float" if y.dtype.is_float else "int32_t"
        body = f"{y.c_name}[y] = ({y.dtype.c_type})(({work}){a.c_name}[o0] {symbol} ({work}){b.c_name}[o1]);"
        return {"code": offset_loops(shape, strides, body), "size": y.numel}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    op: (integer_mapper(IntegerBinaryParser(), f"{op} integer", ANY),) for op in ("Add", "Sub", "Mul")
}
