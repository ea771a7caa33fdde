"""The reduction family: float, typed and integer reductions over axes, one module per variant.

``float32`` holds the vectorised float32 ReduceSum/Mean/Max/Min (specialised by shape on ``dcg_reduce.h``),
``typed`` every ONNX reduction for every element type ONNX allows it on, ``integer`` the integer ReduceSum and
ReduceMean of Deeploy's integer dialect (its rounding), ``integer_mean`` Deeploy's ``IntegerMean`` (the same
kernel under its own op type) and ``arg_reduce`` ArgMax/ArgMin.

ReduceSum and ReduceMean are mapped by ``integer``, ``float32`` and ``typed``, ReduceMax and ReduceMin by
``float32`` and ``typed``; the first whose parser and checker accept a layer gives its kernel, so integer data
keeps Deeploy's semantics and float32 the vectorised kernel.  :data:`VARIANTS` is that order: the sorted names of
the modules these were before the family was made (``arg_reduce``, ``integer``, ``integer_mean``, ``reduce``,
``reduce_typed``), so the generated code did not change; ``plugins/generic_c/tests/test_mapper_precedence.py``
pins the resulting sequences.
"""

from __future__ import annotations

from types import ModuleType

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.reduction import arg_reduce, float32, integer, integer_mean, typed
from deeploy_generic_c.parsing.mapper_tables import merged_mappers

VARIANTS: tuple[ModuleType, ...] = (arg_reduce, integer, integer_mean, float32, typed)
"""The variant modules, first tried first for an op type that several of them map."""


MAPPERS: dict[str, tuple[NodeMapper, ...]] = merged_mappers(VARIANTS)
"""Op type -> mappers, first tried first (in :data:`VARIANTS` order)."""

SCHEMAS: tuple[CustomOpSchema, ...] = integer_mean.SCHEMAS
"""``IntegerMean`` has no ONNX schema."""

NODE_TESTED: tuple[str, ...] = arg_reduce.NODE_TESTED + typed.NODE_TESTED
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
