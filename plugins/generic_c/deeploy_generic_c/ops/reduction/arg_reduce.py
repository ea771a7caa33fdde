"""ArgMax and ArgMin along one axis, for every numeric element type, with int64 indices.

ONNX's reference is numpy's argmax/argmin: the first extreme wins, or the
last one with ``select_last_index``; NaN counts as the extreme (numpy returns
the first NaN).  The comparison is written per layer with the axis' constant
length, so no kernel per element type is linked.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import axis_geometry, row_loops
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.strided import block, normalise_axis
from deeploy_generic_c.ops.reduction.typed import NUMERIC


def replaces(kind: str, last: bool, is_float: bool) -> str:
    """The C condition under which element ``v`` replaces the best so far (``best``)."""
    strict, loose = (">", ">=") if kind == "max" else ("<", "<=")
    op = loose if last else strict
    if not is_float:
        return f"v {op} best"
    if last:  # a later NaN replaces an earlier one
        return f"v != v || (best == best && v {op} best)"
    return f"best == best && (v != v || v {op} best)"


class ArgParser(NodeParser):
    """axis, keepdims (the output shape says which), select_last_index."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        shape = tuple(int(d) for d in x.shape)
        if not shape:
            raise NodeMismatch("shape", "the input is a scalar: there is no axis to search")
        axis = normalise_axis(int(NodeParser.attribute(node, "axis", 0)), len(shape))
        outer, length, inner = axis_geometry(shape, axis)
        last = bool(int(NodeParser.attribute(node, "select_last_index", 0)))
        c_type = x.dtype.c_type
        body = [
            f"const {c_type} *row = src + o * {length * inner} + i;",
            f"{c_type} best = row[0];",
            "int64_t at = 0;",
            f"for (int32_t a = 1; a < {length}; ++a) {{",
            f"    const {c_type} v = row[a * {inner}];",
            f"    if ({replaces(self.kind, last, x.dtype.is_float)}) {{ best = v; at = a; }}",
            "}",
            f"dst[o * {inner} + i] = at;",
        ]
        lines = [f"const {c_type} *src = (const {c_type} *){x.c_name};", f"int64_t *dst = (int64_t *){y.c_name};"]
        return {"call": block(lines + row_loops(outer, inner, body)), "size": x.numel}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "stdint.h"))


def _mapper(op: str, kind: str) -> tuple[NodeMapper, ...]:
    bindings = tuple(NodeBinding(NodeTypeChecker((dtype,), (dtypes.INT64,)), TEMPLATE) for dtype in NUMERIC)
    return (NodeMapper(ArgParser(kind), bindings, name=f"{op} any numeric type"),)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {"ArgMax": _mapper("ArgMax", "max"), "ArgMin": _mapper("ArgMin", "min")}

NODE_TESTED = ("ArgMax", "ArgMin")
