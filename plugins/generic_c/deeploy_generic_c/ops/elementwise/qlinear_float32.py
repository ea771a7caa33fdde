"""Exact mode's QLinearAdd and QLinearMul: ONNX Runtime's unfused float graph, bit for bit.

The lowering marks these nodes ``requantization="float32"``.  ONNX Runtime does not fuse DequantizeLinear →
Add/Mul → QuantizeLinear; it dequantises, runs its float kernel and quantises.  These kernels do the same in
float32 (:mod:`~deeploy_generic_c.kernels.exact_quantisation` says how the dequantisation and quantisation stay
exact under any contraction setting), one float operation per element (commutative, so operand order and
broadcasting do not matter).  Exact mode's average pools, which follow MLAS's summation orders, are in the
pooling family (:mod:`~deeploy_generic_c.ops.pooling.qlinear_float32`).
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import NetworkContext, NodeMapper, NodeParser, OperatorRepresentation
from deeploy_generic_c.kernels.exact_quantisation import DequantTable, ExactQuantiser
from deeploy_generic_c.kernels.offset_loops import offset_loops
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.qlinear_operands import any_types, binary_layout, binary_operands, binary_zero_points
from deeploy_generic_c.parsing.requantising import EXACT_TEMPLATE, exact_mode, output_range


class QLinearBinaryFloat32Parser(NodeParser):
    """QLinearAdd / QLinearMul: ``Q(DQ(a) + DQ(b))`` / ``Q(DQ(a) · DQ(b))`` in float32, numpy broadcasting."""

    inputs = (7, 8)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        exact_mode(node)
        (a, a_scale, a_zero), (b, b_scale, b_zero), (y, y_scale, y_zero) = binary_operands(ctxt, node)
        za, zb = binary_zero_points(a_zero, b_zero)
        table_a = DequantTable("dq_a", a, float(a_scale[0]), za)
        table_b = DequantTable("dq_b", b, float(b_scale[0]), zb)
        quantiser = ExactQuantiser(y_scale, y, y_zero, *output_range(node, y))
        shape, strides = binary_layout(a, b, y)
        operation = "+" if node.op == "QLinearAdd" else "*"
        body = (f"{{ const float v = {table_a.at(f'{a.c_name}[o0]')} {operation} {table_b.at(f'{b.c_name}[o1]')}; "
                f"{quantiser.store(f'{y.c_name}[y]', 'v')} }}")
        code = "\n".join(["{", table_a.declaration(), table_b.declaration(), offset_loops(shape, strides, body), "}"])
        return {"code": code, "size": y.numel * 2,
                "requantization": quantiser.describe(input_scales=[float(a_scale[0]), float(b_scale[0])])}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "com.microsoft.QLinearAdd": single_binding(QLinearBinaryFloat32Parser(), any_types(8), "QLinearAdd float32",
                                               EXACT_TEMPLATE),
    "com.microsoft.QLinearMul": single_binding(QLinearBinaryFloat32Parser(), any_types(8), "QLinearMul float32",
                                               EXACT_TEMPLATE),
}
