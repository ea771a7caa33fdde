"""Cast and CastLike between every element type C carries, with ONNX's semantics and no undefined behaviour.

A Cast to its input's own type stays a view (``Cast (alias)``, no code); every
other one is a loop converting element by element.  ONNX leaves some results
open and C leaves them undefined, so ``dcg_cast.h`` defines them:

* float -> integer truncates toward zero, saturates out of the target's range and maps NaN to 0;
* float -> bool is ``x != 0`` (NaN is true), bool -> number is 0 or 1;
* integer -> integer wraps modulo 2^width (numpy's ``astype``);
* float16 is carried as its bit pattern in ``uint16_t``: conversions to it round to nearest even
  (subnormals, infinities and NaN kept), from it they are exact.  An integer reaches float16 through
  double (exact below 2^53; above, float16 overflows to infinity anyway).

``saturate`` only changes float8 conversions (which C does not carry), so any
value is accepted; CastLike takes its target type from its output (the type of
its second input), whose values it never reads.
"""

from __future__ import annotations

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    ALIAS_MAPPERS,
    DataType,
    NetworkContext,
    NodeBinding,
    NodeMapper,
    NodeMismatch,
    NodeParser,
    NodeTemplate,
    NodeTypeChecker,
    OperatorRepresentation,
)
from deeploy_generic_c.parsing.scalar_parameters import ScalarParameters

CAST_TEMPLATE = NodeTemplate("${code}", headers=("stdint.h", "dcg_cast.h"))

_SMALL_FLOAT_READERS = {"float16": "dcg_f16_to_f64"}
_SMALL_FLOAT_WRITERS = {"float16": "dcg_f64_to_f16"}
_SHORT_INT_NAMES = {"int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
                    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64"}


def _integer_range(dtype: DataType) -> tuple[int, int]:
    if dtype.name == "bool":
        return 0, 1
    if dtype.signed:
        return -(1 << (dtype.bits - 1)), (1 << (dtype.bits - 1)) - 1
    return 0, (1 << dtype.bits) - 1


def _read(dtype: DataType, element: str) -> str:
    """``element`` as a C value that keeps it exactly: double for the storage-only floats, else itself."""
    if dtype.storage_only:
        return f"{_SMALL_FLOAT_READERS[dtype.name]}({element})"
    return element


def conversion(source: DataType, target: DataType, element: str) -> str:
    """The C expression that converts ``element`` of ``source`` type into ``target`` (see the module docstring)."""
    value = _read(source, element)
    if target.name == "bool":
        return f"(uint8_t)({value} != 0)"
    if target.storage_only:
        return f"{_SMALL_FLOAT_WRITERS[target.name]}((double){value})"
    if target.is_float:
        if target.bits == 32 and source.name == "float64":
            return f"dcg_f64_to_f32({value})"
        return f"({target.c_type}){value}"
    if source.is_float:
        return f"dcg_f64_to_{_SHORT_INT_NAMES[target.name]}((double){value})"
    low, high = _integer_range(source)
    target_low, target_high = _integer_range(target)
    if (target_low <= low and high <= target_high) or not target.signed:
        return f"({target.c_type}){value}"
    return f"dcg_wrap_{_SHORT_INT_NAMES[target.name]}((uint64_t){value})"


class ConvertingCastParser(NodeParser):
    """``y[i] = convert(x[i])`` for a Cast or CastLike whose output type differs from its input's."""

    inputs = (1, 2)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        x, y = ctxt[node.inputs[0].name], ctxt[node.outputs[0].name]
        if x.numel != y.numel:
            raise NodeMismatch("shape", f"output {y.shape} has another size than input {x.shape}")
        if x.dtype == y.dtype:
            raise NodeMismatch("dtype", f"input and output are both {x.dtype}: the view handles it")
        expression = conversion(x.dtype, y.dtype, f"{x.c_name}[i]")
        code = f"for (int32_t i = 0; i < {y.numel}; ++i) {y.c_name}[i] = {expression};"
        return {"code": code, "size": y.numel, "conversion": f"{x.dtype} -> {y.dtype}"}


_CONVERTING_BINDING = NodeBinding(NodeTypeChecker((None, None), (None,), moves_storage_types=True), CAST_TEMPLATE)

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    # Cast is element-wise for the tiler by its op type (deeploy_core.tiling.constraints.ELEMENTWISE_OPS)
    "Cast": (*ALIAS_MAPPERS["Cast"], NodeMapper(ConvertingCastParser(), (_CONVERTING_BINDING,), name="Cast converting")),
    # CastLike's second input only names the type: every tile gets it whole (exporters give a one-element constant)
    "CastLike": (*ALIAS_MAPPERS["Cast"], NodeMapper(ConvertingCastParser(), (_CONVERTING_BINDING,),
                                                    name="Cast converting", tile_constraint=ScalarParameters(1))),
}

NODE_TESTED = ("CastLike",)
