"""Einsum: any contraction of static shapes as one loop nest over the equation's letters.

Exporters write batched products (``bij,bjk->bik``, attention's
``bhid,bhjd->bhij``), transposes, sums over axes, outer and inner products
and diagonals; all are the same loop nest once the shapes are known: one loop
per output letter (in the output's order, so the result is written
sequentially), inside them one loop per summed letter, and the product of
every operand's element at the letters' indices added up.  A letter repeated
in one operand indexes a diagonal (its axes' strides add up); an axis of
length one under a longer letter is broadcast (stride 0).  The ellipsis is
expanded by :mod:`._einsum_equation`.

float32 sums in float, float64 in double; integers multiply and add in an
unsigned type at least 32 bits wide, so that they wrap as numpy does instead
of overflowing a signed int (undefined in C).
"""

from __future__ import annotations

import math

import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    DataType, NetworkContext, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.parsing.common import single_binding
from deeploy_generic_c.parsing.einsum_equation import Contraction, EquationError, parse

NODE_TESTED = ("Einsum",)


def _accumulator(dtype: DataType) -> str:
    if dtype is dtypes.FLOAT32:
        return "float"
    if dtype is dtypes.FLOAT64:
        return "double"
    return "uint64_t" if dtype.bits == 64 else "uint32_t"


def letter_strides(letters: str, shape: tuple[int, ...], sizes: dict[str, int]) -> dict[str, int]:
    """Element stride of each letter in one dense operand (a diagonal's axes add up; broadcast axes give 0)."""
    strides: dict[str, int] = {letter: 0 for letter in letters}
    for axis, letter in enumerate(letters):
        if shape[axis] != 1:
            strides[letter] += math.prod(shape[axis + 1:])
    return {letter: stride for letter, stride in strides.items() if sizes[letter] != 1}


def _index(strides: dict[str, int]) -> str:
    terms = [f"e_{letter}" if stride == 1 else f"e_{letter} * {stride}"
             for letter, stride in strides.items() if stride != 0]
    return " + ".join(terms) or "0"


def einsum_code(operands: list[tuple[str, tuple[int, ...]]], y: str, dtype: DataType, contraction: Contraction) -> str:
    """The C statements computing ``y`` from ``operands`` (C names and shapes) as ``contraction`` says."""
    c_type, accumulator = dtype.c_type, _accumulator(dtype)
    lines = ["{"]
    factors = []
    for position, ((name, shape), letters) in enumerate(zip(operands, contraction.operands)):
        lines.append(f"    const {c_type} *dcg_es_{position} = (const {c_type} *){name};")
        element = f"dcg_es_{position}[{_index(letter_strides(letters, shape, contraction.sizes))}]"
        factors.append(element if dtype.is_float else f"({accumulator}){element}")
    lines += [f"    {c_type} *dcg_es_y = ({c_type} *){y};", "    int32_t dcg_es_o = 0;"]
    depth = 1
    for letter in contraction.output:
        if contraction.sizes[letter] != 1:
            lines.append("    " * depth + f"for (int32_t e_{letter} = 0; e_{letter} < {contraction.sizes[letter]}; "
                                         f"++e_{letter}) {{")
            depth += 1
    outer = depth
    lines.append("    " * depth + f"{accumulator} acc = 0;")
    for letter in contraction.summed:
        if contraction.sizes[letter] != 1:
            lines.append("    " * depth + f"for (int32_t e_{letter} = 0; e_{letter} < {contraction.sizes[letter]}; "
                                         f"++e_{letter})")
            depth += 1
    lines.append("    " * depth + f"acc += {' * '.join(factors) if factors else '1'};")
    lines.append("    " * outer + f"dcg_es_y[dcg_es_o++] = ({c_type})acc;")
    for level in range(outer - 1, 0, -1):
        lines.append("    " * level + "}")
    lines.append("}")
    return "\n".join(lines)


class EinsumParser(NodeParser):
    """Any equation over static shapes: letters, repeated letters (diagonals), ellipsis, implicit output."""

    inputs = (1, None)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        sources = [ctxt[tensor.name] for tensor in node.inputs]
        y = ctxt[node.outputs[0].name]
        for source in sources:
            if source.dtype != y.dtype:
                raise NodeMismatch("dtype", f"input type {source.dtype} differs from output type {y.dtype}")
        if y.dtype.name == "bool" or (y.dtype.is_float and y.dtype not in (dtypes.FLOAT32, dtypes.FLOAT64)):
            raise NodeMismatch("dtype", f"Einsum of {y.dtype} is not supported (float32, float64, integers)")
        equation = NodeParser.attribute(node, "equation", "")
        equation = equation.decode() if isinstance(equation, bytes) else str(equation)
        try:
            contraction = parse(equation, [tuple(source.shape) for source in sources])
        except EquationError as error:
            raise NodeMismatch("attribute", f"equation {equation!r}: {error}") from None
        out_shape = tuple(contraction.sizes[letter] for letter in contraction.output)
        if math.prod(out_shape) != y.numel:
            raise NodeMismatch("shape", f"equation {equation!r} gives shape {list(out_shape)}, the graph has "
                                        f"{list(y.shape)}")
        if y.numel == 0:
            return {"call": "", "size": 0}
        summed = math.prod(contraction.sizes[letter] for letter in contraction.summed)
        code = einsum_code([(source.c_name, tuple(source.shape)) for source in sources], y.c_name, y.dtype,
                           contraction)
        return {"call": code, "macs": y.numel * summed if len(sources) > 1 else 0, "size": y.numel * summed}


MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Einsum": single_binding(EinsumParser(), NodeTypeChecker((None,), (None,), variadic=True),
                             "Einsum float32, float64, integers (wrapping)"),
}
