"""The quantisation family: the ops that move values between the float and the integer domain, one module per variant.

``dequant`` and ``quant`` hold Deeploy's ``Dequant`` and ``Quant`` (the ``Sub → Mul`` and ``Div → Add → Round →
Clip`` chains QuantLib folds into one node), ``quantize`` ONNX's QuantizeLinear/DequantizeLinear (QDQ, ONNX
Runtime's arithmetic), ``requant_shift`` Deeploy's ``RequantShift`` (the requantisation of an integer layer on its
own node), and ``rq_integer_div`` the requantised integer division: Deeploy's ``RQIntegerDiv`` and this platform's
``IntegerDivRequantShift`` fusion.  The plain ``IntegerDiv`` (no requantisation) stays in
:mod:`deeploy_generic_c.ops.integer_div`.

No two variants map the same op type, so :data:`VARIANTS`' order decides only the order the schemas are declared
in; it is the sorted names of the modules these were before the family was made (``dequant``, ``integer`` for
RequantShift, ``quant``, ``quantize``, ``rq_integer_div``).
"""

from __future__ import annotations

from types import ModuleType

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.quantisation import dequant, quant, quantize, requant_shift, rq_integer_div
from deeploy_generic_c.parsing.mapper_tables import merged_mappers

VARIANTS: tuple[ModuleType, ...] = (dequant, requant_shift, quant, quantize, rq_integer_div)
"""The variant modules, in the order their mappers and schemas are collected."""


MAPPERS: dict[str, tuple[NodeMapper, ...]] = merged_mappers(VARIANTS)
"""Op type -> mappers, first tried first (in :data:`VARIANTS` order)."""

SCHEMAS: tuple[CustomOpSchema, ...] = dequant.SCHEMAS + quant.SCHEMAS + rq_integer_div.SCHEMAS
"""``Dequant``, ``Quant`` and ``RQIntegerDiv`` have no ONNX schema."""
