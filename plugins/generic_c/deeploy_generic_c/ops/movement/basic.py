"""Data movement for any element type: Transpose, Concat, Slice, Pad, Gather.

The movement ops nearly every exported network has, each a copy that does not look at the values, so one kernel
serves every element type.  Pad takes the constant, reflect and edge modes (:mod:`.padding` has wrap) and Gather
ONNX's usual int64 indices (:mod:`.gather_scatter` has int32 ones, tried first).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, c_array_values, dtypes,
)
from deeploy_generic_c.parsing.common import MAX_DIMS, int_array, single_binding
from deeploy_generic_c.parsing.gather_tiles import GatherTiles
from deeploy_generic_c.parsing.pad_tiles import TILE_BEGIN_ATTRIBUTE, PadTiles
from deeploy_generic_c.parsing.slice_tiles import TILE_BEGIN_ATTRIBUTE as SLICE_TILE_BEGIN
from deeploy_generic_c.parsing.slice_tiles import SliceTiles


def _same_type(source: Buffer, target: Buffer) -> None:
    if source.dtype != target.dtype:
        raise NodeMismatch("dtype", f"output type {target.dtype} differs from input type {source.dtype}")


def _constant_ints(ctxt: NetworkContext, node: gs.Node, index: int, what: str) -> list[int] | None:
    if not NodeParser.is_present(node, index):
        return None
    values = ctxt[node.inputs[index].name].values
    if values is None:
        raise NodeMismatch("shape", f"{what} must be a constant")
    return [int(v) for v in np.asarray(values).reshape(-1)]


def _rank_ok(buffer: Buffer) -> None:
    if len(buffer.shape) > MAX_DIMS:
        raise NodeMismatch("shape", f"rank {len(buffer.shape)} exceeds {MAX_DIMS}")


def transpose_axes(shape: list[int], perm: list[int]) -> tuple[list[int], list[int]]:
    """The same permutation on the fewest axes: size-1 axes dropped, and input axes that stay next to each other
    in the output merged.  ``([n], [0])`` (or ``([], [])``) means the transpose is a plain copy."""
    kept = [axis for axis in range(len(shape)) if shape[axis] != 1]
    order = [kept.index(axis) for axis in perm if shape[axis] != 1]
    sizes = [shape[axis] for axis in kept]
    groups: list[list[int]] = []
    for axis in order:
        if groups and groups[-1][-1] + 1 == axis:
            groups[-1].append(axis)
        else:
            groups.append([axis])
    merged_in = sorted(groups, key=lambda group: group[0])
    merged_sizes = [math.prod(sizes[axis] for axis in group) for group in merged_in]
    return merged_sizes, [merged_in.index(group) for group in groups]


def transpose_loop(x: str, y: str, c_type: str, shape: list[int], perm: list[int]) -> str:
    """The transpose as loops over the output's (collapsed) axes with the layer's constant bounds.

    Why not dcg_transpose: the rank-8 odometer kernel is 839 bytes of x86-64 code, and
    the transposes of a transformer (CCT's [1, 64, 1, 8] -> [1, 1, 64, 8]) mostly collapse
    to a copy or a 2-D transpose, each a loop of a few instructions here.
    """
    sizes, order = transpose_axes(shape, perm)
    count = math.prod(sizes)
    if len(sizes) <= 1:
        return f"for (int32_t i = 0; i < {count}; ++i) {{ (({c_type} *){y})[i] = ((const {c_type} *){x})[i]; }}"
    strides = [math.prod(sizes[axis + 1:]) for axis in range(len(sizes))]
    lines = ["{", f"    {c_type} *out = ({c_type} *){y};"]
    for depth, axis in enumerate(order):
        lines.append("    " * (depth + 1) + f"for (int32_t i{depth} = 0; i{depth} < {sizes[axis]}; ++i{depth}) {{")
    source = " + ".join(f"i{depth}" if strides[axis] == 1 else f"i{depth} * {strides[axis]}"
                        for depth, axis in enumerate(order))
    lines.append("    " * (len(order) + 1) + f"*out++ = ((const {c_type} *){x})[{source}];")
    lines += ["    " * depth + "}" for depth in range(len(order), -1, -1)]
    return "\n".join(lines)


class TransposeParser(NodeParser):
    """Any permutation, rank <= 8, written as loops in the layer (see :func:`transpose_loop`)."""

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        _same_type(x, y)
        _rank_ok(x)
        perm = NodeParser.attribute(node, "perm", None) or list(reversed(range(len(x.shape))))
        shape = list(x.shape) or [1]
        perm = [int(p) for p in perm] or [0]
        if x.dtype.c_type:
            return {"call": transpose_loop(x.c_name, y.c_name, x.dtype.c_type, shape, perm), "size": 0}
        return {
            "call": f"dcg_transpose({x.c_name}, {y.c_name}, {x.dtype.size}, {len(shape)}, {int_array(shape)}, {int_array(perm)});",
            "size": 0,
        }


class ConcatParser(NodeParser):
    """Any axis, any number of inputs."""

    inputs = (1, None)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        sources = [ctxt[t.name] for t in node.inputs]
        y = ctxt[node.outputs[0].name]
        for source in sources:
            _same_type(source, y)
        rank = len(y.shape)
        axis = int(NodeParser.attribute(node, "axis")) % rank
        outer, inner = math.prod(y.shape[:axis]), math.prod(y.shape[axis + 1 :])
        pointers = ", ".join(f"(const void *){s.c_name}" for s in sources)
        sizes = int_array(s.shape[axis] for s in sources)
        return {
            "call": f"dcg_concat((const void *const[]){{{pointers}}}, {sizes}, {len(sources)}, {y.c_name}, {y.dtype.size}, {outer}, {inner});",
            "size": 0,
        }


class SliceParser(NodeParser):
    """Constant starts, ends, axes and steps (negative steps too)."""

    inputs = (3, 5)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        _same_type(x, y)
        _rank_ok(x)
        rank = len(x.shape)
        starts = _constant_ints(ctxt, node, 1, "starts") or []
        axes = _constant_ints(ctxt, node, 3, "axes") or list(range(len(starts)))
        steps = _constant_ints(ctxt, node, 4, "steps") or [1] * len(starts)
        begin, stride = [0] * rank, [1] * rank
        for start, axis, step in zip(starts, axes, steps):
            axis %= rank
            dim = x.shape[axis]
            if step == 0:
                raise NodeMismatch("attribute", "a step of 0 is invalid")
            start = start + dim if start < 0 else start
            begin[axis] = min(max(start, 0), dim) if step > 0 else min(max(start, 0), dim - 1)
            stride[axis] = step
        if SLICE_TILE_BEGIN in node.attrs:  # a tile of the layer (see _slice_tiles): its begin in the tile's box
            begin = [int(offset) for offset in node.attrs[SLICE_TILE_BEGIN]]
        return {
            "call": (
                f"dcg_slice({x.c_name}, {y.c_name}, {x.dtype.size}, {rank}, {int_array(x.shape)}, "
                f"{int_array(y.shape)}, {int_array(begin)}, {int_array(stride)});"
            ),
            "size": 0,
        }


class PadParser(NodeParser):
    """Constant pads (and axes); modes constant, reflect, edge."""

    inputs = (2, 4)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        _same_type(x, y)
        _rank_ok(x)
        rank = len(x.shape)
        mode = NodeParser.attribute(node, "mode", "constant")
        modes = {"constant": 0, "reflect": 1, "edge": 2}
        if mode not in modes:
            raise NodeMismatch("attribute", f"mode={mode!r} is not supported")
        pads = _constant_ints(ctxt, node, 1, "pads") or []
        axes = _constant_ints(ctxt, node, 3, "axes") or list(range(rank))
        begin = [0] * rank
        for position, axis in enumerate(axes):
            begin[axis % rank] = pads[position]
        if TILE_BEGIN_ATTRIBUTE in node.attrs:  # a tile of the layer (see _pad_tiles): its window's own offsets
            begin = [int(offset) for offset in node.attrs[TILE_BEGIN_ATTRIBUTE]]
        value = "NULL"
        if mode == "constant":
            raw = 0
            if NodeParser.is_present(node, 2):
                constant = ctxt[node.inputs[2].name].values
                if constant is None:
                    raise NodeMismatch("shape", "constant_value must be a constant")
                raw = np.asarray(constant).reshape(-1)[0]
            literal = c_array_values(np.asarray([raw], dtype=x.dtype.numpy))
            value = f"(const {x.dtype.c_type}[]){{{literal}}}"
        return {
            "call": (
                f"dcg_pad({x.c_name}, {y.c_name}, {x.dtype.size}, {rank}, {int_array(x.shape)}, {int_array(y.shape)}, "
                f"{int_array(begin)}, {modes[mode]}, {value});"
            ),
            "size": 0,
        }


class GatherParser(NodeParser):
    """int64 indices (constant or computed: token ids as graph inputs), any axis; run-time indices outside the axis
    are clamped to its first or last entry by ``dcg_gather`` (ONNX leaves them an error, C would read out of bounds)."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, indices, y = ctxt[node.inputs[0].name], ctxt[node.inputs[1].name], ctxt[node.outputs[0].name]
        _same_type(x, y)
        rank = len(x.shape)
        axis = int(NodeParser.attribute(node, "axis", 0)) % rank
        outer, length, inner = math.prod(x.shape[:axis]), x.shape[axis], math.prod(x.shape[axis + 1 :])
        return {
            "call": (
                f"dcg_gather({x.c_name}, {indices.c_name}, {y.c_name}, {x.dtype.size}, {outer}, {length}, {inner}, "
                f"{indices.numel});"
            ),
            "size": 0,
        }


ANY = NodeTypeChecker((None,), (None,), variadic=True, moves_storage_types=True)
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Transpose": single_binding(TransposeParser(), ANY, "Transpose any type"),
    "Concat": single_binding(ConcatParser(), ANY, "Concat any type"),
    "Slice": single_binding(SliceParser(), ANY, "Slice any type", tile_constraint=SliceTiles()),
    "Pad": single_binding(PadParser(), NodeTypeChecker((None, dtypes.INT64, None, None), (None,), moves_storage_types=True),
                          "Pad any type", tile_constraint=PadTiles()),
    "Gather": single_binding(GatherParser(), NodeTypeChecker((None, dtypes.INT64), (None,), moves_storage_types=True),
                             "Gather any type", tile_constraint=GatherTiles()),
}
