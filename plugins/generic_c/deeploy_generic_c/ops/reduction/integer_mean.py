"""Deeploy's ``IntegerMean``: the integer ReduceMean of QuantLib exports (e.g. the pooling of a CCT).

It has no ONNX schema, so the platforms declare it with :data:`INTEGER_MEAN_SCHEMA`.
``deeploy-op-semantics.md`` §3 gives it the arithmetic of integer ``ReduceMean``
(verified against Deeploy's held-out models): the exact sum S over the ``axes``
attribute, then half-up ``(S + N/2) >> k`` when ``keepdims = 0`` and N = 2^k, else
``c_div(S + sgn(S)*floor(N/2), N)`` (half away from zero); ``keepdims`` defaults to 1 as in ONNX.
The kernel is the one of integer ``ReduceMean``, which already implements exactly that.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deeploy_core.plugin_api import CustomOpSchema, NodeBinding, NodeMapper
from deeploy_generic_c.parsing.integer_bindings import ANY, INLINE
from deeploy_generic_c.ops.reduction.integer import IntegerReduceParser


def integer_mean_shapes(shapes: Sequence[tuple[int, ...] | None], attributes: Mapping[str, Any]) -> Sequence[tuple[int, ...]]:
    """The input's shape with the ``axes`` reduced to 1 (kept) or removed (``keepdims = 0``); no axes: all of them."""
    shape = shapes[0] if shapes else None
    if shape is None:
        raise ValueError("IntegerMean: input 0 has no shape")
    rank = len(shape)
    raw = attributes.get("axes")
    listed = [raw] if isinstance(raw, int) else list(raw) if raw is not None else list(range(rank))
    if any(not -rank <= int(axis) < rank for axis in listed):
        raise ValueError(f"IntegerMean: axes {listed} out of range for an input of rank {rank}")
    axes = {int(axis) % rank for axis in listed}
    if int(attributes.get("keepdims", 1)):
        return [tuple(1 if axis in axes else dim for axis, dim in enumerate(shape))]
    return [tuple(dim for axis, dim in enumerate(shape) if axis not in axes)]


INTEGER_MEAN_SCHEMA = CustomOpSchema("IntegerMean", shapes=integer_mean_shapes)


class IntegerMeanParser(IntegerReduceParser):
    """Integer mean over the ``axes`` attribute, Deeploy's rounding (half up for keepdims=0 and N=2^k, else half away)."""

    inputs = (1, 1)


SCHEMAS: tuple[CustomOpSchema, ...] = (INTEGER_MEAN_SCHEMA,)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "IntegerMean": (NodeMapper(IntegerMeanParser(), (NodeBinding(ANY, INLINE),), name="IntegerMean integer"),),
}
