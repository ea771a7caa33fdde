"""Pieces shared by the element-wise ops of Deeploy's integer dialect (activations, iNoNorm, RequantizedAdd, RQ division).

QuantLib writes the integer parameters of these ops in three spellings (an int, a float holding an integer, a
1-element tensor); the fused forms Deeploy creates carry their requantisation as constant inputs of which only
the first element counts.  Reading them in one place keeps every op's refusal wording the same, and the loop
helper gives every kernel the same broadcasting (numpy rules, with the channel axis kept apart when a
per-channel requantisation needs it).
"""

from __future__ import annotations

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMismatch
from deeploy_generic_c.parsing.common import broadcast_strides, collapse_broadcast
from deeploy_generic_c.kernels.offset_loops import offset_loops


def integer_attribute(node: gs.Node, name: str) -> int:
    """A required whole-number attribute, whichever of QuantLib's spellings it has (only its first element)."""
    if name not in node.attrs:
        raise NodeMismatch("attribute", f"{node.op} needs the attribute {name!r}")
    raw = node.attrs[name]
    values = np.asarray(raw.values if isinstance(raw, gs.Constant) else raw).reshape(-1)
    if values.size == 0:
        raise NodeMismatch("attribute", f"attribute {name!r} of {node.op} is empty")
    number = float(values[0])
    if number != int(number):
        raise NodeMismatch("attribute", f"attribute {name!r} of {node.op} is {number}; it must be a whole number")
    return int(number)


def shift_of(divisor: int, what: str) -> int:
    """log2 of a power-of-two divisor (``D``, ``div``): the kernels shift, so anything else is refused."""
    if divisor < 1 or divisor & (divisor - 1):
        raise NodeMismatch("attribute", f"{what} is {divisor}; it must be a power of two")
    return divisor.bit_length() - 1


def first_constant(ctxt: NetworkContext, tensor: gs.Tensor, what: str) -> int:
    """The first element of a constant input (Deeploy's fused kernels read ``*mul``, ``*add``, ``*shift``)."""
    buffer = ctxt[tensor.name]
    if buffer.values is None:
        raise NodeMismatch("shape", f"{what} must be a constant (an initializer)")
    values = np.asarray(buffer.values).reshape(-1)
    if values.size == 0:
        raise NodeMismatch("shape", f"{what} is empty")
    return int(values[0])


def require_integer(buffer: Buffer, what: str) -> None:
    """Refuse a float tensor where the dialect computes on integers (the front end then retypes its producer)."""
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}; the integer kernel takes integers", wants_integer=(buffer.name,))


def element_loops(y: Buffer, operands: list[Buffer], body: str, per_channel: bool = False) -> str:
    """Loops over ``y`` with each operand numpy-broadcast to it: ``body`` reads ``o<k>`` (offsets) and ``y``.

    With ``per_channel`` the output's own axes are kept (no merging), so ``body`` can name the channel
    (axis 1) as :func:`channel_index` spells it.
    """
    strides = [broadcast_strides(operand.shape, y.shape) for operand in operands]
    if per_channel:
        return offset_loops(list(y.shape), strides, body)
    shape, merged = collapse_broadcast(y.shape, strides)
    return offset_loops(shape, merged, body)


def channel_index(y: Buffer) -> str:
    """The C expression of the axis-1 index inside :func:`element_loops` with ``per_channel`` (0 for rank < 2)."""
    return "i1" if len(y.shape) > 1 else "0"


def saturate_int8(value: str, mul: int, add: int, shift: int) -> str:
    """Deeploy's fused requantisation: ``clamp((value*mul + add + 2^(shift-1)) >> shift, -128, 127)`` (64-bit).

    The clamp is int8's whatever ``n_levels``/``signed`` say (semantics §4.5/§4.7/§8); no rounding term
    when ``shift`` is 0 (Deeploy's ``1 << -1`` is undefined there).
    """
    rounding = f" + {1 << (shift - 1)}" if shift > 0 else ""
    return (f"int64_t t = ((int64_t)({value}) * {mul}LL + {add}LL{rounding}) >> {shift}; "
            f"t = t < -128 ? -128 : (t > 127 ? 127 : t);")
