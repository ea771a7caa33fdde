"""``FusedElementwise``: a chain of float element-wise layers (see ``lowering_elementwise``) as one loop.

Every link is written with the C of its unfused layer (``kernels.loops.BINARY_EXPRESSIONS``, the Round and Clip
bodies of :mod:`.float32`) applied to a register ``v`` instead of an array, so each element goes through the
same float operations in the same order.
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import (
    Buffer, CustomOpSchema, Elementwise, NetworkContext, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTypeChecker, OperatorRepresentation, dtypes,
)
from deeploy_generic_c.lowering_elementwise import FUSED_OP
from deeploy_generic_c.parsing.common import CALL_WITH_MATH, broadcast_strides, c_float, collapse_broadcast
from deeploy_generic_c.kernels.loops import BINARY_EXPRESSIONS


def _offset(strides: list[int]) -> str:
    terms = [f"i{axis}" if stride == 1 else f"i{axis} * {stride}" for axis, stride in enumerate(strides) if stride]
    return " + ".join(terms) or "0"


ARITHMETIC = ("add", "sub", "mul", "div", "pow")
"""Steps whose result comes out of an IEEE operation: never a signalling NaN."""


def _round(v: str, after_arithmetic: bool) -> str:
    """Round half to even without libm, as :class:`.float32.RoundParser` does (the reasons are there).

    RoundParser's select between ``copysignf(r, v)`` and ``v`` makes gcc 12 ``-O2`` give up on the whole
    loop ("control flow in loop": it sinks the additions into the branch and may not speculate them), and a
    fused chain would lose the vectorisation of all its other steps.  After an arithmetic step the select
    moves onto the magic constant instead: below 2^23 the additions are RoundParser's, from 2^23 up (and
    for inf and NaN) adding and subtracting 0 returns the magnitude unchanged and copysignf restores ``v``
    bit for bit.  The one value that would differ, a signalling NaN (quietened by ``+ 0``), cannot come out
    of an arithmetic step; elsewhere the chain keeps RoundParser's form.
    """
    if after_arithmetic:
        return f"{{ const float m = fabsf({v}), h = m < 0x1p23f ? 0x1p23f : 0.0f; {v} = copysignf((m + h) - h, {v}); }}"
    return (f"{{ const float m = fabsf({v}), r = (m + 0x1p23f) - 0x1p23f; "
            f"{v} = m < 0x1p23f ? copysignf(r, {v}) : {v}; }}")


class FusedElementwiseParser(NodeParser):
    """float32 chain of Add/Sub/Mul/Div/Pow/Max/Min (constant operand, broadcast), Round and Clip."""

    inputs = (1, None)

    def parse(self, node: gs.Node, ctxt: NetworkContext) -> OperatorRepresentation:
        y = ctxt[node.outputs[0].name]
        x = ctxt[node.inputs[0].name]
        operands: list[Buffer] = [ctxt[t.name] for t in node.inputs]
        if tuple(x.shape) != tuple(y.shape):
            raise NodeMismatch("shape", f"the chain's input {tuple(x.shape)} and output {tuple(y.shape)} differ")
        steps = [str(step) for step in node.attrs.get("steps", [])]
        # Operands of one element are read once before the loop; the others get an offset in the loop nest.
        scalar = {index for index, operand in enumerate(operands) if index and int(np.prod(operand.shape)) == 1}
        strides = [broadcast_strides(tuple(operand.shape), tuple(y.shape)) for operand in operands]
        shape, merged = collapse_broadcast(tuple(y.shape), strides)
        if not shape:
            shape, merged = [1], [[0] for _ in operands]
        y_strides, running = [0] * len(shape), 1
        for axis in range(len(shape) - 1, -1, -1):
            y_strides[axis] = running
            running *= shape[axis]
        body = [f"float v = {x.c_name}[{_offset(merged[0])}];"]
        previous = ""
        for step in steps:
            body.append(self._step(step, operands, merged, scalar, previous in ARITHMETIC))
            previous = step.split()[0]
        body.append(f"{y.c_name}[{_offset(y_strides)}] = v;")
        prologue = "".join(f"const float c{index} = {operands[index].c_name}[0]; " for index in sorted(scalar))
        lines = ["{ " + prologue if prologue else "{"]
        for axis, dim in enumerate(shape):
            lines.append("    " * (axis + 1) + f"for (int32_t i{axis} = 0; i{axis} < {dim}; ++i{axis}) {{")
        depth = "    " * (len(shape) + 1)
        lines += [depth + statement for statement in body]
        for axis in range(len(shape) - 1, -1, -1):
            lines.append("    " * (axis + 1) + "}")
        lines.append("}")
        return {"call": "\n".join(lines), "size": y.numel, "steps": len(steps)}

    @staticmethod
    def _step(step: str, operands: list[Buffer], merged: list[list[int]], scalar: set[int],
              after_arithmetic: bool) -> str:
        words = step.split()
        if words == ["round"]:
            return _round("v", after_arithmetic)
        if len(words) == 3 and words[0] == "clip":
            parts = []
            for word, test in ((words[1], "<"), (words[2], ">")):
                if word != "none":
                    bound = c_float(float.fromhex(word))
                    parts.append(f"v = v {test} {bound} ? {bound} : v;")
            return " ".join(parts)
        if len(words) == 3 and words[0] in BINARY_EXPRESSIONS:
            index, side = int(words[1]), int(words[2])
            if not 0 < index < len(operands) or side not in (0, 1):
                raise NodeMismatch("attribute", f"step {step!r} names no constant operand")
            value = f"c{index}" if index in scalar else f"{operands[index].c_name}[{_offset(merged[index])}]"
            if index not in scalar:
                return (f"{{ const float w = {value}; "
                        f"v = {BINARY_EXPRESSIONS[words[0]]('v', 'w') if side == 0 else BINARY_EXPRESSIONS[words[0]]('w', 'v')}; }}")
            expression = BINARY_EXPRESSIONS[words[0]]
            return f"v = {expression('v', value) if side == 0 else expression(value, 'v')};"
        raise NodeMismatch("attribute", f"unknown step {step!r}")


FUSED_ELEMENTWISE_SCHEMA = CustomOpSchema(FUSED_OP)
"""Shape and type of the chain's input (the lowering only fuses chains that keep both)."""

SCHEMAS: tuple[CustomOpSchema, ...] = (FUSED_ELEMENTWISE_SCHEMA,)

# Tiled like any element-wise layer (every operand numpy-broadcast to the output box): the parser reads the
# shapes of the tile's buffers, so the same code generation serves whole tensors and tiles.
MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    FUSED_OP: (NodeMapper(FusedElementwiseParser(),
                          (NodeBinding(NodeTypeChecker((dtypes.FLOAT32,), (dtypes.FLOAT32,), variadic=True), CALL_WITH_MATH),),
                          name="FusedElementwise float32", tile_constraint=Elementwise()),),
}
