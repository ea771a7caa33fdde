"""The elementwise family: float, integer, requantised and QLinear element-wise ops, one module per variant.

``typed_arithmetic`` holds Add/Sub/Mul/Div/Mod/Pow for every element type but float32 (integers wrap),
``float32`` the runtime's vectorised float32 binary ops and activations (Clip, Gelu, Round...), ``integer``
Add/Sub/Mul with an integer operand of mixed types (int32 arithmetic), ``float_math`` the typed float unary math
(float64 where ``float32`` has float32) and PRelu, ``signs`` Neg/Abs/Sign, ``variadic`` Max/Min/Sum/Mean of any
number of inputs, ``fused`` the ``FusedElementwise`` chains of the lowering, ``requantized`` Deeploy's
``RequantizedAdd``, and the QOperator QLinearAdd/QLinearMul one module per arithmetic: ``qlinear`` (no
``requantization`` attribute), ``qlinear_float32`` (exact mode), ``qlinear_tflite`` (TFLite's).

Several variants map the same op type (Add, Sub, Mul, Div, Pow, Max, Min, Abs, Neg, the float activations,
QLinearAdd/Mul); the first whose parser and checker accept a layer gives its kernel.  :data:`VARIANTS` is that
order: the sorted names of the modules these were before the family was made (``arithmetic``, ``elementwise``,
``float_math``, ``fused_elementwise``, ``integer``, ``qlinear``, ``qlinear_float32``, ``qlinear_tflite``,
``requantized_add``, ``signs``, ``variadic``), so the generated code did not change;
``plugins/generic_c/tests/test_mapper_precedence.py`` pins the resulting sequences.
"""

from __future__ import annotations

from types import ModuleType

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.elementwise import (
    float32, float_math, fused, integer, qlinear, qlinear_float32, qlinear_tflite, requantized, signs, typed_arithmetic,
    variadic,
)
from deeploy_generic_c.parsing.mapper_tables import merged_mappers

VARIANTS: tuple[ModuleType, ...] = (
    typed_arithmetic, float32, float_math, fused, integer, qlinear, qlinear_float32, qlinear_tflite, requantized,
    signs, variadic,
)
"""The variant modules, first tried first for an op type that several of them map."""


MAPPERS: dict[str, tuple[NodeMapper, ...]] = merged_mappers(VARIANTS)
"""Op type -> mappers, first tried first (in :data:`VARIANTS` order)."""

SCHEMAS: tuple[CustomOpSchema, ...] = fused.SCHEMAS + requantized.SCHEMAS
"""``FusedElementwise`` and ``RequantizedAdd`` have no ONNX schema."""

NODE_TESTED: tuple[str, ...] = (typed_arithmetic.NODE_TESTED + float_math.NODE_TESTED + signs.NODE_TESTED
                                + variadic.NODE_TESTED)
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
