"""Pieces shared by the row-wise integer kernels of Deeploy's dialect (ITAMax family, iLayerNorm, iRMSNorm).

These ops reduce over the last axis of an 8-bit tensor and read their
parameters from attributes that QuantLib writes as ints, floats or 1-element
tensors.  Keeping the attribute reading, the input check and the exact
integer square root in one place means the two op modules report a missing
attribute with the same words and cannot drift apart in their arithmetic.
"""

from __future__ import annotations

import math

import numpy as np
import onnx_graphsurgeon as gs

from deeploy_core.plugin_api import Buffer, NetworkContext, NodeMismatch, dtypes


def required_integer(node: gs.Node, name: str) -> int:
    """The whole-valued scalar attribute ``name``; a missing or fractional one refuses the node (no default exists)."""
    if name not in node.attrs:
        raise NodeMismatch("attribute", f"attribute {name!r} is required; add it to the node (Deeploy gives it no default)")
    raw = node.attrs[name]
    try:
        value = np.asarray(raw.values if isinstance(raw, gs.Constant) else raw, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise NodeMismatch("attribute", f"attribute {name!r} must be a number, got {raw!r}") from None
    if value.size != 1 or not math.isfinite(float(value[0])) or float(value[0]) != int(value[0]):
        raise NodeMismatch("attribute", f"attribute {name!r} must be one whole number, got {value.tolist()}")
    return int(value[0])


def power_of_two_shift(node: gs.Node, name: str) -> int:
    """log2 of the power-of-two attribute ``name`` (the ``D`` of the norms), the right shift the kernel applies."""
    value = required_integer(node, name)
    if value < 1 or value & (value - 1):
        raise NodeMismatch("attribute", f"attribute {name!r} is {value}; it must be a power of two")
    return value.bit_length() - 1


def eight_bit_input(buffer: Buffer, op: str) -> None:
    """Refuse anything but int8/uint8 data: the kernels' fixed constants (-128 start, 256 scale) assume 8 bits."""
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"input 0 is {buffer.dtype}, {op} takes int8 or uint8", wants_integer=(buffer.name,))
    if buffer.dtype not in (dtypes.INT8, dtypes.UINT8):
        raise NodeMismatch("dtype", f"input 0 is {buffer.dtype}, {op} takes int8 or uint8")


def integer_parameter(buffer: Buffer, what: str, length: int) -> None:
    """A per-column parameter (weight, bias) must be integer and hold one value per element of the last axis."""
    if buffer.dtype.is_float:
        raise NodeMismatch("dtype", f"{what} is {buffer.dtype}; it must hold integers", wants_integer=(buffer.name,))
    if buffer.numel != length:
        raise NodeMismatch("shape", f"{what} has {buffer.numel} values; expected {length} (the last axis)")


def exact_isqrt(value: str, root: str) -> str:
    """C statements setting ``uint64_t root`` to floor(sqrt(value)) for any ``value`` in [0, 2^64).

    Digit-by-digit (two bits per step) in integers only: a double ``sqrt`` is
    off by one next to large perfect squares, and the norms' outputs jump when
    the divisor does, so the root must be exact.  ``root`` must name a
    declared ``uint64_t``; ``value`` is evaluated once.
    """
    return (f"{{ uint64_t rem_ = (uint64_t)({value}), bit_ = (uint64_t)1 << 62; {root} = 0; "
            f"while (bit_ > rem_) bit_ >>= 2; "
            f"while (bit_ != 0) {{ if (rem_ >= {root} + bit_) {{ rem_ -= {root} + bit_; {root} = ({root} >> 1) + bit_; }} "
            f"else {root} >>= 1; bit_ >>= 2; }} }}")
