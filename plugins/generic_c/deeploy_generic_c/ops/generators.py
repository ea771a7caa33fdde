"""Ops whose output depends on their inputs' shapes or on scalars only: Size, ConstantOfShape, EyeLike, Range.

They are folded at compile time whenever their inputs are constants; these
kernels run when an input is a run-time tensor.  The output's shape is the
one the model declares (or shape inference gives), fixed at compile time:
ConstantOfShape's shape and Range's limit are read at compile time only, so
a run-time value that asks for another length is not honoured (a static
network cannot change its sizes).  Range's start and delta are read at run
time; its integer arithmetic wraps modulo 2^width, like numpy's.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    DataType, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, OperatorRepresentation,
)

CODE = NodeTemplate("${code}", headers=("stdint.h", "math.h", "dcg_cast.h"))


def c_literal(dtype: DataType, value: float | int | bool) -> str:
    """``value`` as a C constant of ``dtype`` (exact: hexadecimal floats, float16 as its bit pattern)."""
    if dtype.storage_only:
        return f"UINT16_C({int(np.array(value, dtype=dtype.numpy).view(np.uint16))})"
    if dtype.is_float:
        number = float(np.array(value, dtype=dtype.numpy))
        if np.isnan(number):
            return f"({dtype.c_type})NAN"
        if np.isinf(number):
            return f"({dtype.c_type})({'-' if number < 0 else ''}INFINITY)"
        return f"({dtype.c_type}){number.hex()}"
    if dtype.name == "bool":
        return "1u" if value else "0u"
    number = int(value)
    if dtype.bits == 64:
        return f"INT64_C({number})" if dtype.signed and number != -(1 << 63) else (
            "INT64_MIN" if dtype.signed else f"UINT64_C({number})")
    return f"({dtype.c_type})({number}{'' if dtype.signed else 'u'})" if number != -(1 << 31) else "INT32_MIN"


def _fill(y_name: str, count: int, value: str) -> str:
    return f"for (int32_t i = 0; i < {count}; ++i) {y_name}[i] = {value};"


class SizeParser(NodeParser):
    """``y = numel(x)`` as int64: the input's values are never read."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        return {"code": f"{y.c_name}[0] = INT64_C({x.numel});", "size": 1}


class ConstantOfShapeParser(NodeParser):
    """The output (of its declared shape) filled with ``value`` (default float32 0)."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        y = ctxt[node.outputs[0].name]
        value = node.attrs.get("value")
        values = np.asarray(value.values if isinstance(value, gs.Constant) else (0.0 if value is None else value))
        if values.size != 1:
            raise NodeMismatch("attribute", f"value has {values.size} elements; ONNX wants one")
        return {"code": _fill(y.c_name, y.numel, c_literal(y.dtype, values.reshape(-1)[0].item())), "size": y.numel}


class EyeLikeParser(NodeParser):
    """A 2-D output with ones on diagonal ``k`` (above the main one for k > 0), zeros elsewhere."""

    inputs = (1, 1)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        y = ctxt[node.outputs[0].name]
        if len(y.shape) != 2:
            raise NodeMismatch("shape", f"output has rank {len(y.shape)}; EyeLike is 2-D")
        rows, columns = y.shape
        k = int(NodeParser.attribute(node, "k", 0))
        one, zero = c_literal(y.dtype, 1), c_literal(y.dtype, 0)
        code = (f"for (int32_t r = 0; r < {rows}; ++r) for (int32_t c = 0; c < {columns}; ++c) "
                f"{y.c_name}[r * {columns} + c] = c - r == {k} ? {one} : {zero};")
        return {"code": code, "size": y.numel}


_RANGE_TYPES = {"float32": "float", "float64": "double", "int16": "i16", "int32": "i32", "int64": "i64"}


class RangeParser(NodeParser):
    """``y[i] = start + i * delta`` for the output's (compile-time) length; floats in their own type."""

    inputs = (3, 3)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        start, delta, y = ctxt[node.inputs[0].name], ctxt[node.inputs[2].name], ctxt[node.outputs[0].name]
        if y.dtype.name not in _RANGE_TYPES:
            raise NodeMismatch("dtype", f"Range of {y.dtype}; ONNX's Range takes float, double, int16, int32, int64")
        if y.dtype.is_float:
            value = f"{start.c_name}[0] + ({y.dtype.c_type})i * {delta.c_name}[0]"
        else:
            value = (f"dcg_wrap_{_RANGE_TYPES[y.dtype.name]}((uint64_t){start.c_name}[0] + "
                     f"(uint64_t)i * (uint64_t){delta.c_name}[0])")
        return {"code": _fill(y.c_name, y.numel, value), "size": y.numel}


def _single(parser: NodeParser, checker: NodeTypeChecker, name: str) -> tuple[NodeMapper, ...]:
    return (NodeMapper(parser, (NodeBinding(checker, CODE),), name=name),)


_ANY = NodeTypeChecker((None,), (None,), moves_storage_types=True)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Size": _single(SizeParser(), _ANY, "Size"),
    "ConstantOfShape": _single(ConstantOfShapeParser(), _ANY, "ConstantOfShape fill"),
    "EyeLike": _single(EyeLikeParser(), _ANY, "EyeLike"),
    "Range": _single(RangeParser(), NodeTypeChecker((None, None, None), (None,)), "Range"),
}

NODE_TESTED = ("ConstantOfShape", "EyeLike", "Range", "Size")
