"""Reductions over any set of axes (float32), specialised by shape in the generated code.

The input's axes are grouped into contiguous blocks that are all kept or all
reduced (axes of length one dropped, neighbours of one kind merged), so any
axis set becomes a short alternation such as ``[kept 1][reduced 49][kept 320]``.
The innermost two blocks are one call to an inline helper of ``dcg_reduce.h``
(reduced rows over a kept contiguous block, or kept rows over a reduced
contiguous block); the outer blocks become loops with constant bounds.  Sizes,
strides and the reduction kind are literals, so after inlining the compiler
sees constant trip counts and restrict pointers and vectorises at -O2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeMapper, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import reduction_axes
from deeploy_generic_c.parsing.common import HEADERS, c_float, single_binding

KINDS = {"reduce_sum": "DCG_REDUCE_SUM", "reduce_mean": "DCG_REDUCE_SUM", "reduce_max": "DCG_REDUCE_MAX",
         "reduce_min": "DCG_REDUCE_MIN"}
"""The helper's combining step per kernel (a mean is a sum divided at the end)."""


@dataclass(frozen=True)
class Block:
    """Adjacent input axes of one kind, merged: their element count and whether they are reduced."""

    size: int
    reduced: bool


def axis_blocks(shape: tuple[int, ...], mask: list[bool]) -> list[Block]:
    """``shape`` as alternating kept/reduced blocks, outermost first (axes of length one carry no loop)."""
    blocks: list[Block] = []
    for size, reduced in zip(shape, mask):
        if size == 1:
            continue
        if blocks and blocks[-1].reduced == reduced:
            blocks[-1] = Block(blocks[-1].size * size, reduced)
        else:
            blocks.append(Block(size, reduced))
    return blocks


def reduction_code(x: str, y: str, blocks: list[Block], kernel: str) -> str:
    """The C statements reducing ``x`` into ``y`` (both float pointers) over ``blocks``."""
    kind = KINDS[kernel]
    kept = [b.size for b in blocks if not b.reduced]
    outputs, count = math.prod(kept), math.prod(b.size for b in blocks if b.reduced)
    inner = blocks[-2:] if len(blocks) >= 2 else blocks
    outer = blocks[: len(blocks) - len(inner)]
    # element strides of every block in x and (kept blocks only) in y
    x_strides, y_strides, x_run, y_run = [], [], 1, 1
    for block in reversed(blocks):
        x_strides.append(x_run)
        y_strides.append(0 if block.reduced else y_run)
        x_run *= block.size
        y_run *= 1 if block.reduced else block.size
    x_strides.reverse()
    y_strides.reverse()
    x_terms = [f"i{level} * {x_strides[level]}" for level in range(len(outer))]
    y_terms = [f"i{level} * {y_strides[level]}" for level in range(len(outer)) if not outer[level].reduced]
    x_at = f"{x} + " + " + ".join(x_terms) if x_terms else x
    y_at = f"{y} + " + " + ".join(y_terms) if y_terms else y
    if inner[-1].reduced:  # kept rows (or one output) over a contiguous reduced block
        rows = inner[0].size if len(inner) == 2 else 1
        call = f"dcg_reduce_rows_f32({y_at}, {x_at}, {rows}, {inner[-1].size}, {kind});"
    else:  # reduced rows over a contiguous kept block
        call = f"dcg_reduce_cols_f32({y_at}, {x_at}, {inner[0].size}, {inner[-1].size}, {kind});"
    lines = [f"dcg_reduce_fill_f32({y}, {outputs}, {kind});"]
    indent = ""
    for level, block in enumerate(outer):
        lines.append(f"{indent}for (int32_t i{level} = 0; i{level} < {block.size}; ++i{level})")
        indent += "    "
    lines.append(indent + call)
    if kernel == "reduce_mean":
        lines.append(f"dcg_reduce_divide_f32({y}, {outputs}, {c_float(float(count))});")
    return "\n".join(lines)


class ReduceParser(NodeParser):
    """Axes as a constant input (opset >= 18) or attribute; keepdims 0/1; noop_with_empty_axes."""

    inputs = (1, 2)

    def __init__(self, kernel: str) -> None:
        self.kernel = kernel

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        rank = len(x.shape)
        copy = {"call": f"dcg_copy({x.c_name}, {y.c_name}, {x.size_bytes});", "size": 0}
        axes = reduction_axes(node, ctxt, rank)
        if axes is None:
            return copy
        mask = [axis in axes for axis in range(rank)]
        blocks = axis_blocks(tuple(x.shape), mask)
        if not any(block.reduced for block in blocks):  # only axes of length one: a copy
            return copy
        x_ptr, y_ptr = f"(const float *){x.c_name}", f"(float *){y.c_name}"
        return {"call": reduction_code(x_ptr, y_ptr, blocks, self.kernel), "size": x.numel}


REDUCE = NodeTemplate("${call}", headers=(*HEADERS, "dcg_reduce.h"))
"""The parser writes the statements (or a copy's call); the template adds the helpers' header."""

FLOAT = NodeTypeChecker((dtypes.FLOAT32, dtypes.INT64), (dtypes.FLOAT32,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    op: single_binding(ReduceParser(kernel), FLOAT, f"{op} float32", REDUCE)
    for op, kernel in (("ReduceMean", "reduce_mean"), ("ReduceSum", "reduce_sum"), ("ReduceMax", "reduce_max"), ("ReduceMin", "reduce_min"))
}
