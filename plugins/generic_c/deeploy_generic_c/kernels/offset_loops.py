"""Nested loops over an output shape with one running offset per operand: the integer element-wise kernels' frame.

The integer, requantised and QLinear kernels of several families (element-wise, MatMul, the dialect's fused
ops) all walk their output in order while each operand follows its own (broadcast) strides; this writes that
frame once, with the layer's constant shape, so the kernel body only says what one element computes.
"""

from __future__ import annotations


def offset_loops(shape: list[int], strides: list[list[int]], body: str) -> str:
    """Nested C loops over ``shape``; ``body`` uses o0, o1, … (operand offsets) and ``y`` (output index)."""
    lines, indent = [], "    "
    lines.append("{")
    lines.append(f"{indent}int32_t y = 0;")
    for axis, dim in enumerate(shape):
        lines.append(f"{indent * (axis + 1)}for (int32_t i{axis} = 0; i{axis} < {dim}; ++i{axis}) {{")
    depth = len(shape) + 1
    for operand, operand_strides in enumerate(strides):
        terms = " + ".join(f"i{axis} * {stride}" for axis, stride in enumerate(operand_strides) if stride) or "0"
        lines.append(f"{indent * depth}const int32_t o{operand} = {terms};")
    lines.append(f"{indent * depth}{body}")
    lines.append(f"{indent * depth}++y;")
    for axis in reversed(range(len(shape))):
        lines.append(f"{indent * (axis + 1)}}}")
    lines.append("}")
    return "\n".join(lines)
