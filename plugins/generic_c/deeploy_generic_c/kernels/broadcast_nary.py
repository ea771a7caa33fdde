"""One element-wise loop over any number of numpy-broadcast operands, with the layer's constant bounds.

Why another loop writer: :func:`deeploy_generic_c.kernels.loops.binary_loop` reads exactly two float
operands; Where has three, Sum/Mean/Max/Min any number, and the typed kernels
read int64, bool or double elements.  Here the caller gives the statement
(``target``, one read expression per operand), so the element type stays the
caller's business; the broadcasting is written the same way as in
``binary_loop``: one flat loop when every operand has the output's size (or
one element), else one loop per dimension of the collapsed iteration space.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast

Statement = Callable[[str, Sequence[str]], str]
"""``statement(target, reads)``: the C statement that stores into ``target`` from one read expression per operand."""


def _index(strides: Sequence[int]) -> str:
    terms = [f"i{axis}" if stride == 1 else f"i{axis} * {stride}"
             for axis, stride in enumerate(strides) if stride != 0]
    return " + ".join(terms) or "0"


def broadcast_loop(statement: Statement, operands: Sequence[tuple[str, tuple[int, ...]]], y: str,
                   y_shape: tuple[int, ...]) -> str:
    """``y = statement(operands…)`` element by element, every operand numpy-broadcast to ``y_shape``."""
    count = math.prod(y_shape)
    sizes = [math.prod(shape) for _, shape in operands]
    if all(size in (count, 1) for size in sizes):
        reads = [f"{name}[i]" if size == count else f"{name}[0]" for (name, _), size in zip(operands, sizes)]
        return f"for (int32_t i = 0; i < {count}; ++i) {{ {statement(f'{y}[i]', reads)} }}"
    shape, strides = collapse_broadcast(y_shape, [broadcast_strides(shape, y_shape) for _, shape in operands])
    y_strides, running = [0] * len(shape), 1
    for axis in range(len(shape) - 1, -1, -1):
        y_strides[axis] = running
        running *= shape[axis]
    lines = ["    " * axis + f"for (int32_t i{axis} = 0; i{axis} < {dim}; ++i{axis}) {{" for axis, dim in enumerate(shape)]
    reads = [f"{name}[{_index(operand)}]" for (name, _), operand in zip(operands, strides)]
    lines.append("    " * len(shape) + statement(f"{y}[{_index(y_strides)}]", reads))
    lines += ["    " * axis + "}" for axis in range(len(shape) - 1, -1, -1)]
    return "\n".join(lines)
