"""Op tables of the generic C platform, one module per family of operators.

Each module listed in :data:`FAMILIES` defines ``MAPPERS: dict[str, tuple[NodeMapper, ...]]`` and, for ops
without an ONNX schema (Deeploy's dialect), ``SCHEMAS: tuple[CustomOpSchema, ...]``.  The C those parsers emit is
written by :mod:`deeploy_generic_c.kernels`; what several families read from a layer is in
:mod:`deeploy_generic_c.parsing`.

Mapper precedence
-----------------
The engine tries an op's mappers in order and takes the first whose parser and type checker accept the layer,
so for an op mapped by several modules the order decides which kernel a layer gets.  That order is
:data:`FAMILIES`, written out here (it used to follow the sorted file names, so renaming a module could change
the generated code).  Within one module, the order of its ``MAPPERS`` entry decides; a family that is a
subpackage (``conv``, ``elementwise``, ``matmul``, ``movement``, ``normalization``, ``pooling``,
``quantisation``, ``reduction``, ``softmax``) assembles its ``MAPPERS`` from its variant modules in its
``__init__``, in the order it documents there.  The op types that several modules map, in that order, with what
each module's kernel takes (``plugins/generic_c/tests/test_mapper_precedence.py`` pins the sequence):

=====================================  ==========================================================================
op types                               modules, first tried first
=====================================  ==========================================================================
Add, Sub, Mul                          elementwise, inside the family: elementwise.typed_arithmetic (two
                                       operands of one type other than float32; integers wrap), then
                                       elementwise.float32, then elementwise.integer (integer operands of mixed
                                       types, int32 arithmetic)
Div, Pow                               elementwise, inside the family: elementwise.typed_arithmetic (Div: one
                                       type other than float32; Pow: mixed types), then elementwise.float32
Abs, Neg                               elementwise, inside the family: elementwise.float32, then
                                       elementwise.signs (integers and float64)
Ceil, Elu, Erf, Exp, Floor,            elementwise, inside the family: elementwise.float32 (Round with its own
HardSigmoid, HardSwish, LeakyRelu,     RoundParser), then elementwise.float_math (the typed float kernels:
Log, Reciprocal, Relu, Round,          float64 where elementwise.float32 has float32)
Sigmoid, Softplus, Sqrt, Tanh
Max, Min                               elementwise, inside the family: elementwise.float32 (two float32
                                       operands), then elementwise.variadic (any number of inputs of one
                                       numeric type)
Conv                                   conv, inside the family: conv.integer (integer operands), then
                                       conv.float32
Gemm, MatMul                           matmul, inside the family: matmul.integer (integer operands), then
                                       matmul.float32
MaxPool                                pooling, inside the family: pooling.integer (integer data), then
                                       pooling.float32
ReduceSum, ReduceMean                  reduction, inside the family: reduction.integer (integer data), then
                                       reduction.float32, then reduction.typed (the other element types)
ReduceMax, ReduceMin                   reduction, inside the family: reduction.float32, then reduction.typed
Gather                                 movement, inside the family: movement.gather_scatter (int32 indices),
                                       then movement.basic (int64 indices)
Pad                                    movement, inside the family: movement.basic, then movement.padding
                                       (``mode="wrap"`` only)
LayerNormalization                     normalization, inside the family: normalization.float32 (output Y
                                       only), then normalization.layer_norm_stats (with the Mean and InvStdDev
                                       outputs, or float64)
QLinearAdd, QLinearMul                 elementwise, inside the family: elementwise.qlinear (QOperator nodes
                                       without a ``requantization`` attribute), then elementwise.qlinear_float32
                                       (``requantization="float32"``, exact mode), then
                                       elementwise.qlinear_tflite (TFLite's arithmetic); each declines the other
                                       modes
QLinearAveragePool,                    pooling, inside the family: pooling.qlinear (no attribute), then
QLinearGlobalAveragePool               pooling.qlinear_float32 (exact mode), then pooling.qlinear_tflite
                                       (TFLite's arithmetic); each declines the other modes
QLinearSoftmax                         softmax, inside the family: softmax.qlinear_float32 (exact mode), then
                                       softmax.qlinear_tflite
=====================================  ==========================================================================

Where the checkers or the parsers of two modules both accept a layer, the first one's kernel is generated; the
order above is the one the sorted file names gave before it was written down, so the generated code did not
change when it was.  Every other op type is mapped by one module, where its position in :data:`FAMILIES` does not matter; the
schemas are declared in :data:`FAMILIES` order too.  A new family is added to :data:`FAMILIES` (a module that is
not listed is not collected; ``test_mapper_precedence.py`` checks that none is forgotten).
"""

from __future__ import annotations

import importlib

from types import ModuleType

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.parsing.mapper_tables import merged_mappers

FAMILIES: tuple[str, ...] = (
    "affine_grid",
    "bitwise",
    "cast",
    "comparison",
    "conv",
    "cumulative",
    "debug_print",
    "dropout",
    "einsum",
    "elementwise",
    "generators",
    "grid_sample",
    "integer_activations",
    "integer_div",
    "integer_lookup",
    "logical",
    "matmul",
    "movement",
    "normalization",
    "pooling",
    "quantisation",
    "recurrent",
    "reduction",
    "resize",
    "softmax",
    "top_k",
    "where",
)
"""The family modules of this package, in mapper precedence order (see the module docstring)."""


def family_modules() -> list[ModuleType]:
    """The family modules in :data:`FAMILIES` order."""
    return [importlib.import_module(f"{__name__}.{name}") for name in FAMILIES]


def collect_custom_ops() -> tuple[CustomOpSchema, ...]:
    """The declarations of every schema-less op the families map, in :data:`FAMILIES` order."""
    return tuple(schema for module in family_modules() for schema in getattr(module, "SCHEMAS", ()))


def collect_mappers() -> dict[str, tuple[NodeMapper, ...]]:
    """Every op type of every family, mappers in :data:`FAMILIES` order (the precedence the engine tries them in)."""
    return merged_mappers(family_modules())
