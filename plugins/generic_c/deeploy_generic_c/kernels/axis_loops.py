"""Loops over the kept and the reduced axes of one layer, for reductions, arg-reductions, TopK and normalisations.

Every op of this family walks, for each position of the axes it keeps, the
elements of the axes it reduces (one axis for ArgMax, TopK, LogSoftmax; a set
for ReduceL2 or an RMSNormalization over ``axis..rank``).  Written as loops
with the layer's constant bounds (axes of length one dropped, neighbours of one
kind merged), the walk needs no runtime kernel per element type and the C
compiler sees every trip count.  Integer sums and products wrap modulo
2**bits as numpy and ONNX's reference do, through ``uint64_t`` (no signed
overflow) and a branch back to the signed type (no out-of-range conversion).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import DataType, NetworkContext, NodeMismatch, NodeParser
from deeploy_generic_c.kernels.strided import block, counters, nested_loops, normalise_axis, offset


@dataclass(frozen=True)
class AxisRun:
    """Adjacent input axes of one kind (kept or reduced), merged: element count and element stride in the input."""

    size: int
    stride: int


def split_axes(shape: Sequence[int], reduced: set[int]) -> tuple[list[AxisRun], list[AxisRun]]:
    """The kept and the reduced runs of a dense tensor of ``shape``, outermost first (length-one axes carry no
    loop; neighbours of one kind merge, which is exact for a dense layout)."""
    kept: list[AxisRun] = []
    cut: list[AxisRun] = []
    previous: bool | None = None
    stride = math.prod(shape)
    for axis, size in enumerate(shape):
        stride //= max(size, 1)
        if size == 1:
            continue
        is_reduced = axis in reduced
        runs = cut if is_reduced else kept
        if previous is is_reduced and runs:
            runs[-1] = AxisRun(runs[-1].size * size, stride)
        else:
            runs.append(AxisRun(size, stride))
        previous = is_reduced
    return kept, cut


def reduced_axes(axes: Sequence[int], rank: int) -> set[int]:
    """``axes`` in ``[0, rank)``; a one-line refusal for an axis out of range or named twice."""
    result: set[int] = set()
    for axis in axes:
        if not -rank <= axis < rank:
            raise NodeMismatch("attribute", f"axis {axis} is out of range for rank {rank}")
        if axis % rank in result:
            raise NodeMismatch("attribute", f"axis {axis} is named twice")
        result.add(axis % rank)
    return result


def reduction_code(x: str, y: str, in_type: DataType, out_type: DataType, shape: Sequence[int], reduced: set[int],
                   passes: Sequence[tuple[Sequence[str], str]], finish: Sequence[str], elementwise: bool = False) -> str:
    """C statements that, for every kept position ``o`` (dense in the output), run each pass over the reduced
    elements and then ``finish``.

    A pass is (statements before the loop, statement per element): the element is ``v`` (``const T``), the
    input row ``src`` and its start ``base``.  ``finish`` writes ``dst[o]`` (``dst`` has ``out_type``).  With
    ``elementwise`` (an output shaped like the input: MeanVarianceNormalization) the element's position
    ``at`` is declared too, for a last pass that writes ``dst[at]``.
    """
    kept, cut = split_axes(shape, reduced)
    outer, inner = counters(len(kept), "k"), counters(len(cut), "r")
    body: list[str] = [f"const int32_t base = {offset(outer, [run.stride for run in kept])};"]
    position = f"base + {offset(inner, [run.stride for run in cut])}"
    element = f"const {in_type.c_type} v = src[{position}];"
    if elementwise:
        element = f"const int32_t at = {position}; const {in_type.c_type} v = src[at]; (void)at;"
    for start, step in passes:
        body += list(start)
        if cut:
            body += nested_loops([run.size for run in cut], [element, step], prefix="r")
        else:  # every reduced axis has length one: one element, in a block of its own per pass
            body += ["{", "    " + element, "    " + step, "}"]
    body += [*finish, "++o;"]
    lines = [f"const {in_type.c_type} *src = (const {in_type.c_type} *){x};",
             f"{out_type.c_type} *dst = ({out_type.c_type} *){y};",
             "int32_t o = 0;",
             *nested_loops([run.size for run in kept], body, prefix="k")]
    return block(lines)


def narrowed(dtype: DataType, wide: str) -> str:
    """The ``uint64_t`` expression ``wide`` modulo 2**bits, read as integer type ``dtype`` without an
    out-of-range conversion (``wide`` is evaluated more than once: pass a name)."""
    unsigned = f"uint{dtype.bits}_t"
    if not dtype.signed:
        return f"({dtype.c_type})({wide})"
    return (f"(({unsigned})({wide}) <= ({unsigned})INT{dtype.bits}_MAX ? ({dtype.c_type})({unsigned})({wide}) "
            f": ({dtype.c_type})(-({dtype.c_type})({unsigned})~({unsigned})({wide}) - 1))")


def axis_geometry(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    """(outer, length, inner) of one axis of a dense tensor: rows of ``length`` elements ``inner`` apart."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def reduction_axes(node: gs.Node, ctxt: NetworkContext, rank: int) -> set[int] | None:
    """The reduced axes from the ``axes`` input (opset >= 13/18) or attribute; None for noop_with_empty_axes with
    no axes (the output is the input)."""
    axes: list[int] | None = None
    if NodeParser.is_present(node, 1):
        values = ctxt[node.inputs[1].name].values
        if values is None:
            raise NodeMismatch("shape", "axes must be a constant")
        axes = [int(a) for a in values.reshape(-1)]
    elif NodeParser.attribute(node, "axes", None) is not None:
        axes = [int(a) for a in NodeParser.attribute(node, "axes")]
    if not axes:
        if int(NodeParser.attribute(node, "noop_with_empty_axes", 0)):
            return None
        return set(range(rank))
    return reduced_axes(axes, rank)


def node_axis_geometry(shape: Sequence[int], axis: int) -> tuple[int, int, int]:
    """:func:`axis_geometry` of the ``axis`` attribute of a one-axis row op (LogSoftmax, Hardmax,
    LpNormalization): a scalar has no axis, and an axis outside ``[-rank, rank)`` is refused."""
    if not shape:
        raise NodeMismatch("shape", "the input is a scalar: there is no axis")
    return axis_geometry(shape, normalise_axis(axis, len(shape)))


def row_loops(outer: int, inner: int, body: Sequence[str]) -> list[str]:
    """Loops ``o`` (over the axes before the one reduced) and ``i`` (over those after it) around ``body``; the
    row of ``(o, i)`` starts at ``o * length * inner + i`` and its elements are ``inner`` apart."""
    return [
        f"for (int32_t o = 0; o < {outer}; ++o) {{",
        f"    for (int32_t i = 0; i < {inner}; ++i) {{",
        *("        " + line for line in body),
        "    }",
        "}",
    ]
