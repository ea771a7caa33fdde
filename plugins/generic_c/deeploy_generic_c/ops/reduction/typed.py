"""Every ONNX reduction (Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare) for every element type
ONNX allows it on, as loops over the layer's constant shapes.

The family's :mod:`.float32` keeps its vectorised float32 Sum/Mean/Max/Min (it is tried first);
this module adds the other kinds and types.  Float32 sums accumulate in double
(a long row summed in float loses digits that numpy's pairwise sum keeps);
LogSumExp subtracts the row's largest finite value before exponentiating, so it
neither overflows nor underflows to log(0).  Integer results wrap as numpy's do
(see ``_axis_loops``); bool Max/Min are any/all.  Integer ReduceMean, and
ReduceSum into int32, stay :mod:`.integer`'s (Deeploy's integer semantics, tried
first).
"""

from __future__ import annotations

import math
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    AlongAxes, DataType, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.kernels.axis_loops import narrowed, reduction_axes, reduction_code
from deeploy_generic_c.parsing.common import HEADERS
from deeploy_generic_c.kernels.strided import block

FLOATS = (dtypes.FLOAT32, dtypes.FLOAT64)
INTEGERS = (dtypes.INT8, dtypes.INT16, dtypes.INT32, dtypes.INT64, dtypes.UINT8, dtypes.UINT16, dtypes.UINT32, dtypes.UINT64)
NUMERIC = FLOATS + INTEGERS
WIDE = FLOATS + (dtypes.INT32, dtypes.INT64, dtypes.UINT32, dtypes.UINT64)
"""The types ONNX's reductions take (ReduceMax/Min also int8, uint8 and bool)."""

Passes = list[tuple[list[str], str]]
Plan = tuple[Passes, list[str]]
"""What one reduction runs per output: its passes over the reduced elements and the statements writing ``dst[o]``."""


def _literal(dtype: DataType, extreme: str) -> str:
    """The smallest (``min``) or largest (``max``) value of ``dtype`` as C."""
    if dtype.is_float:
        return "(-INFINITY)" if extreme == "min" else "INFINITY"
    if dtype is dtypes.BOOL:
        return "0" if extreme == "min" else "1"
    if not dtype.signed:
        return "0" if extreme == "min" else f"UINT{dtype.bits}_MAX"
    return f"INT{dtype.bits}_MIN" if extreme == "min" else f"INT{dtype.bits}_MAX"


def _extreme(dtype: DataType, kind: str) -> Plan:
    """Max/Min: NaN wins once seen (numpy's maximum.reduce); an empty set gives the identity (ONNX's reference)."""
    start = _literal(dtype, "min" if kind == "max" else "max")
    if dtype is dtypes.BOOL:
        step = "acc = (uint8_t)(acc | v);" if kind == "max" else "acc = (uint8_t)(acc & v);"
    elif dtype.is_float:
        op = ">" if kind == "max" else "<"
        step = f"if (acc == acc && (v {op} acc || v != v)) acc = v;"
    else:
        step = f"if (v {'>' if kind == 'max' else '<'} acc) acc = v;"
    return [([f"{dtype.c_type} acc = {start};"], step)], ["dst[o] = acc;"]


def _float_plan(dtype: DataType, kind: str, count: int) -> Plan:
    c_type = dtype.c_type
    sums = {"sum": "acc += v;", "mean": "acc += v;", "sum_square": "acc += (double)v * v;",
            "l1": "acc += v < 0 ? -(double)v : (double)v;", "l2": "acc += (double)v * v;", "log_sum": "acc += v;",
            "prod": "acc *= v;"}
    if kind == "log_sum_exp":
        exp = "expf" if dtype is dtypes.FLOAT32 else "exp"
        passes: Passes = [
            ([f"{c_type} peak = (-INFINITY);"], "if (v > peak && v != INFINITY) peak = v;"),
            (["if (peak == (-INFINITY)) peak = 0;", "double acc = 0.0;"], f"acc += {exp}(v - peak);"),
        ]
        return passes, [f"dst[o] = ({c_type})(log(acc) + (double)peak);"]
    start = "double acc = 1.0;" if kind == "prod" else "double acc = 0.0;"
    if kind == "mean":
        value = f"acc / {count}.0" if count else "NAN"
    else:
        value = {"l2": "sqrt(acc)", "log_sum": "log(acc)"}.get(kind, "acc")
    return [([start], sums[kind])], [f"dst[o] = ({c_type})({value});"]


def _integer_plan(dtype: DataType, kind: str, count: int) -> Plan:
    """Sums and products in ``uint64_t``, wrapped back into ``dtype`` (numpy's and ONNX's integer results)."""
    if kind not in ("sum", "sum_square", "l1", "prod"):
        raise NodeMismatch("dtype", f"{dtype} input: the kernel takes float32 or float64")
    absolute = "v < 0 ? 0u - (uint64_t)v : (uint64_t)v" if dtype.signed else "(uint64_t)v"
    steps = {"sum": "acc += (uint64_t)v;",
             "sum_square": "acc += (uint64_t)v * (uint64_t)v;", "l1": f"acc += {absolute};",
             "prod": "acc *= (uint64_t)v;"}
    start = "uint64_t acc = 1u;" if kind == "prod" else "uint64_t acc = 0u;"
    return [([start], steps[kind])], [f"const {dtype.c_type} total = {narrowed(dtype, 'acc')};", "dst[o] = total;"]


def plan(dtype: DataType, kind: str, count: int) -> Plan:
    """The passes and the final statements of reduction ``kind`` over ``count`` elements of ``dtype``."""
    if kind in ("max", "min"):
        return _extreme(dtype, kind)
    if dtype is dtypes.BOOL:
        raise NodeMismatch("dtype", "bool input: only ReduceMax and ReduceMin take bool")
    return (_float_plan if dtype.is_float else _integer_plan)(dtype, kind, count)


class TypedReduceParser(NodeParser):
    """Axes as a constant input or attribute, keepdims, noop_with_empty_axes; any element type the kind takes."""

    inputs = (1, 2)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        shape = tuple(int(d) for d in x.shape)
        axes = reduction_axes(node, ctxt, len(shape))
        if axes is None:  # noop_with_empty_axes: Y = X
            copy = f"for (int32_t i = 0; i < {x.numel}; ++i) dst[i] = src[i];"
            c_type = x.dtype.c_type
            call = block([f"const {c_type} *src = (const {c_type} *){x.c_name};",
                          f"{c_type} *dst = ({c_type} *){y.c_name};", copy])
            return {"call": call, "size": 0}
        count = math.prod(shape[axis] for axis in axes)
        passes, finish = plan(x.dtype, self.kind, count)
        call = reduction_code(x.c_name, y.c_name, x.dtype, y.dtype, shape, axes, passes, finish)
        return {"call": call, "size": x.numel}


TEMPLATE = NodeTemplate("${call}", headers=(*HEADERS, "math.h", "stdint.h"))

KINDS: dict[str, tuple[str, tuple[DataType, ...]]] = {
    "ReduceSum": ("sum", WIDE),
    "ReduceMean": ("mean", FLOATS),  # integer means are .integer's (Deeploy's rounding, tried first)
    "ReduceMax": ("max", WIDE + (dtypes.INT8, dtypes.UINT8, dtypes.BOOL)),
    "ReduceMin": ("min", WIDE + (dtypes.INT8, dtypes.UINT8, dtypes.BOOL)),
    "ReduceProd": ("prod", WIDE),
    "ReduceSumSquare": ("sum_square", WIDE),
    "ReduceL1": ("l1", WIDE),
    "ReduceL2": ("l2", FLOATS),
    "ReduceLogSum": ("log_sum", FLOATS),
    "ReduceLogSumExp": ("log_sum_exp", FLOATS),
}
"""ONNX op -> (kind, element types); ReduceSum/Mean/Max/Min float32 rows are .float32's first."""

NEW_OPS = ("ReduceProd", "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp")


def _mapper(op: str) -> NodeMapper:
    kind, types = KINDS[op]
    bindings = tuple(NodeBinding(NodeTypeChecker((dtype, None), (dtype,)), TEMPLATE) for dtype in types)
    constraint = AlongAxes("reduce") if op in NEW_OPS else None  # the older four have it by default
    return NodeMapper(TypedReduceParser(kind), bindings, name=f"{op} any type", tile_constraint=constraint)


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {op: (_mapper(op),) for op in KINDS}

NODE_TESTED = NEW_OPS
