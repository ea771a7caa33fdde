"""Loops over a layer's constant shape, written into the generated code, for the indexing and data-movement ops.

Tile, Expand, Trilu, GatherElements, ScatterND, … all walk an index space
whose bounds the compiler knows; writing the walk as nested ``for`` loops with
those bounds (instead of calling an odometer kernel with shape arrays) keeps
each layer a few instructions long and needs no runtime kernel per element
type.  Two concepts live here because every one of those ops needs both: the
nested loops themselves, and the C that turns a run-time index into a safe
position on one axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from deeploy_core.plugin_api import DataType, NodeMismatch
from deeploy_generic_c.parsing.common import collapse_broadcast


def dense_strides(shape: Sequence[int]) -> list[int]:
    """Element strides of a dense C-order tensor of ``shape``."""
    strides, running = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        strides[axis] = running
        running *= shape[axis]
    return strides


def offset(counters: Sequence[str], strides: Sequence[int]) -> str:
    """``c0 * s0 + c1 * s1 …``, leaving out zero strides (``0`` when nothing is left)."""
    terms = [name if stride == 1 else f"{name} * {stride}" for name, stride in zip(counters, strides) if stride != 0]
    return " + ".join(terms) or "0"


def nested_loops(shape: Sequence[int], body: Sequence[str], prefix: str = "i") -> list[str]:
    """``for`` loops ``{prefix}0 … {prefix}n-1`` over ``shape`` around ``body`` (which uses those counters)."""
    lines = [f"{'    ' * depth}for (int32_t {prefix}{depth} = 0; {prefix}{depth} < {size}; ++{prefix}{depth}) {{"
             for depth, size in enumerate(shape)]
    lines += ["    " * len(shape) + line for line in body]
    lines += ["    " * depth + "}" for depth in range(len(shape) - 1, -1, -1)]
    return lines


def counters(rank: int, prefix: str = "i") -> list[str]:
    return [f"{prefix}{axis}" for axis in range(rank)]


def block(lines: Sequence[str]) -> str:
    """The lines in one C block, so that a layer's local names never meet another layer's."""
    return "\n".join(["{", *("    " + line for line in lines), "}"])


def typed_views(dtype: DataType, sources: dict[str, str], targets: dict[str, str]) -> list[str]:
    """``const T *name = (const T *)buffer;`` for sources and ``T *name = (T *)buffer;`` for targets."""
    c_type = dtype.c_type
    return ([f"const {c_type} *{name} = (const {c_type} *){buffer};" for name, buffer in sources.items()]
            + [f"{c_type} *{name} = ({c_type} *){buffer};" for name, buffer in targets.items()])


def strided_copy(x: str, y: str, dtype: DataType, shape: Sequence[int], source_strides: Sequence[int]) -> str:
    """``y`` (dense, walked over ``shape``) takes ``x[sum(i * source_strides)]``: broadcasts (stride 0), tiles
    and permutations alike.  Axes contiguous for both sides are merged first, so an Expand over rows is two
    loops whatever the rank."""
    if math.prod(shape) == 0:
        return "/* empty output: no code */"
    merged, (source, target) = collapse_broadcast(tuple(shape), [list(source_strides), dense_strides(shape)])
    names = counters(len(merged))
    body = [f"dst[{offset(names, target)}] = src[{offset(names, source)}];"]
    return block(typed_views(dtype, {"src": x}, {"dst": y}) + nested_loops(merged, body))


def normalise_axis(axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[0, rank)``; a clear refusal outside ``[-rank, rank)``."""
    if not -rank <= axis < rank:
        raise NodeMismatch("attribute", f"{what} {axis} is out of range for rank {rank}")
    return axis % rank


def check_constant_indices(values: object, length: int, what: str) -> None:
    """Refuse constant indices outside ``[-length, length)`` at compile time (ONNX calls them an error)."""
    flat = np.asarray(values).reshape(-1).astype(np.int64)
    bad = flat[(flat < -length) | (flat >= length)]
    if bad.size:
        raise NodeMismatch("shape", f"{what} {int(bad[0])} is out of range for an axis of {length} elements")


def safe_index(target: str, source: str, length: int) -> str:
    """``int32_t target`` = the run-time index ``source`` (any integer type) as a position in ``[0, length)``.

    Negative indices count from the end as ONNX says; an index still outside the axis after that (ONNX calls
    it an error, so no result is wrong) is clamped to the nearest end, so a bad run-time index can never read
    or write outside the tensor."""
    return (f"int64_t {target}_raw = (int64_t){source}; if ({target}_raw < 0) {target}_raw += {length}; "
            f"const int32_t {target} = {target}_raw < 0 ? 0 : ({target}_raw >= {length} ? {length - 1} "
            f": (int32_t){target}_raw);")
