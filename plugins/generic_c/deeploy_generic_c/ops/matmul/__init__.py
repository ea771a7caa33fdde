"""The matrix-product family: every numeric variant of Gemm and MatMul, and the quantised and fused forms.

``integer`` holds the raw-integer and requantised kernels (with Deeploy's ``RQGemm``/``RQMatMul``),
``float32`` the float ones, ``matmul_integer`` ONNX's ``MatMulInteger`` (zero points subtracted in int32) and
``qlinear`` the QOperator ``QLinearMatMul`` and ``com.microsoft.QGemm``.  For ``Gemm`` and ``MatMul`` the
integer mapper is tried before the float one (the order the sorted module names gave, pinned by
``test_mapper_precedence.py``): its parser declines float operands and the float checker integer ones.  Every
other op type here has one variant module.
"""

from __future__ import annotations

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.matmul import float32, integer, matmul_integer, qlinear
from deeploy_generic_c.parsing.requantised_schemas import gemm_shape, matmul_shape, requantised_type

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Gemm": integer.MAPPERS["Gemm"] + float32.MAPPERS["Gemm"],
    "MatMul": integer.MAPPERS["MatMul"] + float32.MAPPERS["MatMul"],
    "RequantizedGemm": integer.MAPPERS["RequantizedGemm"],
    "RequantizedMatMul": integer.MAPPERS["RequantizedMatMul"],
    "RQGemm": integer.MAPPERS["RQGemm"],
    "RQMatMul": integer.MAPPERS["RQMatMul"],
    "MatMulInteger": matmul_integer.MAPPERS["MatMulInteger"],
    "QLinearMatMul": qlinear.MAPPERS["QLinearMatMul"],
    "com.microsoft.QGemm": qlinear.MAPPERS["com.microsoft.QGemm"],
}
"""Op type -> mappers, first tried first."""

SCHEMAS: tuple[CustomOpSchema, ...] = (
    CustomOpSchema("RQGemm", shapes=gemm_shape, types=requantised_type),
    CustomOpSchema("RQMatMul", shapes=matmul_shape, types=requantised_type),
)
"""Deeploy's ``RQGemm``/``RQMatMul`` have no ONNX schema.

Their shapes and types: :mod:`deeploy_generic_c.parsing.requantised_schemas`."""
