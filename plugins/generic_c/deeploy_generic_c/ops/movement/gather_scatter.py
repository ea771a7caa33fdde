"""GatherElements, GatherND, ScatterElements (and its deprecated alias Scatter) and ScatterND, for every element type.

Each layer is written as loops over its constant shapes (see
:mod:`deeploy_generic_c.kernels.strided`); indices may be int32 or int64,
constant or computed at run time.  Out-of-range indices: ONNX calls them an
error.  Constant ones are refused at compile time; run-time ones are first
taken from the end when negative (as ONNX says) and then clamped to the
nearest end of their axis, so no index can make the generated code read or
write outside a tensor (the result for such an index is that of the clamped
one).  Scatters copy the data to the output and then apply the updates in
index order, so with duplicate indices the last update wins (``none``) or all
of them are combined (``add``/``mul``/``max``/``min``, see
:mod:`deeploy_generic_c.kernels.reductions`).
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.gather_tiles import GatherTiles
from deeploy_generic_c.parsing.indexing import check_if_constant, require_index_type, require_same_type
from deeploy_generic_c.kernels.reductions import combine
from deeploy_generic_c.kernels.strided import (
    block,
    check_constant_indices,
    counters,
    dense_strides,
    nested_loops,
    normalise_axis,
    offset,
    safe_index,
    typed_views,
)


def _index_view(indices: Buffer) -> str:
    return f"const {indices.dtype.c_type} *idx = (const {indices.dtype.c_type} *){indices.c_name};"


def _times(name: str, stride: int) -> str:
    return name if stride == 1 else f"{name} * {stride}"


def _copy_all(count: int) -> list[str]:
    """The scatter's first step: the output starts as a copy of the data."""
    return [f"for (int32_t i = 0; i < {count}; ++i) dst[i] = src[i];"]


class Int32GatherParser(NodeParser):
    """Gather with int32 indices (:mod:`.basic`'s Gather takes ONNX's usual int64 ones), any axis, clamped at run time."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        data, indices, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        require_same_type(data, y)
        if indices.dtype != dtypes.INT32:
            raise NodeMismatch("dtype", f"indices are {indices.dtype}, this kernel takes int32")
        if not data.shape:
            raise NodeMismatch("shape", "Gather needs data of rank >= 1")
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", 0)), len(data.shape))
        length = data.shape[axis]
        check_if_constant(indices, length)
        outer, inner = math.prod(data.shape[:axis]), math.prod(data.shape[axis + 1:])
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        count = indices.numel
        body = [safe_index("k", "idx[t]", length),
                f"for (int32_t e = 0; e < {inner}; ++e) dst[(o * {count} + t) * {inner} + e] = "
                f"src[(o * {length} + k) * {inner} + e];"]
        lines = typed_views(data.dtype, {"src": data.c_name}, {"dst": y.c_name}) + [_index_view(indices)]
        lines += [f"for (int32_t o = 0; o < {outer}; ++o) {{", f"    for (int32_t t = 0; t < {count}; ++t) {{",
                  *("        " + line for line in body), "    }", "}"]
        return {"call": block(lines), "size": 0}


class GatherElementsParser(NodeParser):
    """``y[i] = data[i with axis coordinate replaced by indices[i]]``; indices have data's rank, any sizes."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        data, indices, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        require_same_type(data, y)
        require_index_type(indices)
        rank = len(data.shape)
        if rank == 0 or len(indices.shape) != rank:
            raise NodeMismatch("shape", f"indices of rank {len(indices.shape)} for data of rank {rank}")
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", 0)), rank)
        length = data.shape[axis]
        check_if_constant(indices, length)
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        names = counters(rank)
        source = list(dense_strides(data.shape))
        axis_stride, source[axis] = source[axis], 0
        body = [safe_index("k", f"idx[{offset(names, dense_strides(indices.shape))}]", length),
                f"dst[{offset(names, dense_strides(indices.shape))}] = src[{offset(names, source)} + {_times('k', axis_stride)}];"]
        lines = typed_views(data.dtype, {"src": data.c_name}, {"dst": y.c_name}) + [_index_view(indices)]
        return {"call": block(lines + nested_loops(indices.shape, body)), "size": 0}


class GatherNDParser(NodeParser):
    """``batch_dims`` leading axes shared by data and indices; each index tuple selects an element or a slice."""

    inputs = (2, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        data, indices, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        require_same_type(data, y)
        require_index_type(indices)
        batch_dims = int(NodeParser.attribute(node, "batch_dims", 0))
        depth = indices.shape[-1] if indices.shape else 0
        if not indices.shape or not 0 <= batch_dims < len(indices.shape) or batch_dims + depth > len(data.shape):
            raise NodeMismatch("shape", f"indices {list(indices.shape)} with batch_dims={batch_dims} do not fit "
                                        f"data {list(data.shape)}")
        if list(data.shape[:batch_dims]) != list(indices.shape[:batch_dims]):
            raise NodeMismatch("shape", "data and indices differ in their batch axes")
        picked = data.shape[batch_dims:batch_dims + depth]
        if indices.values is not None:
            columns = np.asarray(indices.values).reshape(-1, depth) if depth else np.zeros((0, 0))
            for column, length in enumerate(picked):
                check_constant_indices(columns[:, column], length, "index")
        batches = math.prod(data.shape[:batch_dims])
        tuples = math.prod(indices.shape[batch_dims:-1])
        inner = math.prod(data.shape[batch_dims + depth:])
        batch_stride = math.prod(data.shape[batch_dims:])
        strides = dense_strides(data.shape[batch_dims:])[:depth]
        if y.numel == 0:
            return {"call": "/* empty output: no code */", "size": 0}
        body = [f"const int32_t t = b * {tuples} + m;", f"int32_t at = b * {batch_stride};"]
        for column, (length, stride) in enumerate(zip(picked, strides)):
            body.append(safe_index(f"k{column}", f"idx[t * {depth} + {column}]", length))
            body.append(f"at += k{column} * {stride};")
        body.append(f"for (int32_t e = 0; e < {inner}; ++e) dst[t * {inner} + e] = src[at + e];")
        lines = typed_views(data.dtype, {"src": data.c_name}, {"dst": y.c_name}) + [_index_view(indices)]
        lines += [f"for (int32_t b = 0; b < {batches}; ++b) {{", f"    for (int32_t m = 0; m < {tuples}; ++m) {{",
                  *("        " + line for line in body), "    }", "}"]
        return {"call": block(lines), "size": 0}


class ScatterElementsParser(NodeParser):
    """ScatterElements (and Scatter): ``y = data``, then ``y[i with axis coordinate indices[i]] (op)= updates[i]``."""

    inputs = (3, 3)

    def __init__(self, reductions: bool = True) -> None:
        super().__init__()
        self.reductions = reductions

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        data, indices, updates, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        require_same_type(data, y)
        require_same_type(data, updates, "updates")
        require_index_type(indices)
        rank = len(data.shape)
        if rank == 0 or len(indices.shape) != rank or list(updates.shape) != list(indices.shape):
            raise NodeMismatch("shape", f"indices {list(indices.shape)} and updates {list(updates.shape)} do not fit "
                                        f"data {list(data.shape)}")
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", 0)), rank)
        reduction = str(NodeParser.attribute(node, "reduction", "none")) if self.reductions else "none"
        length = data.shape[axis]
        check_if_constant(indices, length)
        names = counters(rank)
        target = list(dense_strides(data.shape))
        axis_stride, target[axis] = target[axis], 0
        element = f"dst[{offset(names, target)} + {_times('k', axis_stride)}]"
        update = f"upd[{offset(names, dense_strides(indices.shape))}]"
        body = [safe_index("k", f"idx[{offset(names, dense_strides(indices.shape))}]", length),
                combine(data.dtype, reduction, element, update)]
        lines = typed_views(data.dtype, {"src": data.c_name, "upd": updates.c_name}, {"dst": y.c_name})
        lines += [_index_view(indices), *_copy_all(data.numel)]
        if indices.numel:
            lines += nested_loops(indices.shape, body)
        return {"call": block(lines), "size": 0}


class ScatterNDParser(NodeParser):
    """``y = data``, then for every index tuple ``y[tuple] (op)= updates[tuple's position]`` (elements or slices)."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        data, indices, updates, y = (ctxt[t.name] for t in (*node.inputs, node.outputs[0]))
        require_same_type(data, y)
        require_same_type(data, updates, "updates")
        require_index_type(indices)
        depth = indices.shape[-1] if indices.shape else 0
        if not indices.shape or depth > len(data.shape) or \
                list(updates.shape) != list(indices.shape[:-1]) + list(data.shape[depth:]):
            raise NodeMismatch("shape", f"indices {list(indices.shape)} and updates {list(updates.shape)} do not fit "
                                        f"data {list(data.shape)}")
        reduction = str(NodeParser.attribute(node, "reduction", "none"))
        if indices.values is not None and depth:
            columns = np.asarray(indices.values).reshape(-1, depth)
            for column in range(depth):
                check_constant_indices(columns[:, column], data.shape[column], "index")
        tuples = math.prod(indices.shape[:-1])
        inner = math.prod(data.shape[depth:])
        strides = dense_strides(data.shape)[:depth]
        body = ["int32_t at = 0;"]
        for column, (length, stride) in enumerate(zip(data.shape, strides)):
            body.append(safe_index(f"k{column}", f"idx[u * {depth} + {column}]", length))
            body.append(f"at += k{column} * {stride};")
        element, update = "dst[at + e]", f"upd[u * {inner} + e]"
        body.append(f"for (int32_t e = 0; e < {inner}; ++e) {combine(data.dtype, reduction, element, update)}")
        lines = typed_views(data.dtype, {"src": data.c_name, "upd": updates.c_name}, {"dst": y.c_name})
        lines += [_index_view(indices), *_copy_all(data.numel)]
        if tuples and inner:
            lines += [f"for (int32_t u = 0; u < {tuples}; ++u) {{", *("    " + line for line in body), "}"]
        return {"call": block(lines), "size": 0}


_TWO = NodeTypeChecker((None, None), (None,))
_THREE = NodeTypeChecker((None, None, None), (None,))
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Gather": single_binding(Int32GatherParser(), NodeTypeChecker((None, dtypes.INT32), (None,)), "Gather int32 indices",
                             tile_constraint=GatherTiles()),
    "GatherElements": single_binding(GatherElementsParser(), _TWO, "GatherElements any type"),
    "GatherND": single_binding(GatherNDParser(), _TWO, "GatherND any type"),
    "ScatterElements": single_binding(ScatterElementsParser(), _THREE, "ScatterElements any type"),
    "Scatter": single_binding(ScatterElementsParser(reductions=False), _THREE, "Scatter any type"),
    "ScatterND": single_binding(ScatterNDParser(), _THREE, "ScatterND any type"),
}
NODE_TESTED = ("GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND")
