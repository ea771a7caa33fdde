"""The templates, checkers and operand check that the integer kernels of every operator family share.

The integer (raw integer domain) and requantised parsers of Conv, MatMul/Gemm, pooling, reductions, softmax
and Deeploy's dialect ops all write their C inline (:data:`INLINE`, or :data:`WITH_SCRATCH` for the kernels
that need an int16 scratch buffer) and decline float operands the same way.
"""

from __future__ import annotations

from deeploy_core.plugin_api import Buffer, NodeBinding, NodeMapper, NodeMismatch, NodeParser, NodeTemplate, NodeTypeChecker, dtypes


def require_integer_operand(buffer: Buffer, what: str) -> None:
    """Decline a float operand; the mismatch names the buffer in ``wants_integer``."""
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}, the integer kernel takes an integer type",
                           wants_integer=(buffer.name,))


INLINE = NodeTemplate("${code}", headers=("stdint.h", "math.h"))
WITH_SCRATCH = NodeTemplate(
    "% if scratch_bytes:\n{\n    int16_t *const dc_scratch = (int16_t *)(void *)(${scratch});\n${code}\n}\n% else:\n${code}\n% endif\n",
    headers=("stdint.h", "math.h"),
    transients=lambda rep: {"scratch": int(rep["scratch_bytes"])},
)
"""Inline code with an int16 scratch buffer ``dc_scratch`` of ``scratch_bytes`` from the arena (none when 0).

The representation's ``scratch`` is ``NULL`` until the mid end (or the tiler) puts the buffer's name there."""
ANY_INT = NodeTypeChecker((None, None, None), (dtypes.INT32,))


def integer_mapper(parser: NodeParser, name: str, checker: NodeTypeChecker = ANY_INT,
                   template: NodeTemplate = INLINE) -> NodeMapper:
    """One binding of ``parser`` with ``checker`` (int32 output by default) and ``template`` (inline code)."""
    return NodeMapper(parser, (NodeBinding(checker, template),), name=name)


ANY = NodeTypeChecker((None,), (None,), variadic=True)
"""Any number of inputs of any type: the integer parsers check the types they take themselves."""
