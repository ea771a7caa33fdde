"""QONNX's quantisation ops, accepted by every platform because the lowering rewrites them away.

Brevitas' ``export_qonnx`` (and FINN's tool chain) writes fake quantisation as
``Quant``, ``Trunc`` and ``BipolarQuant`` in domain ``qonnx.custom_op.general``.
No platform has a kernel for them: :mod:`deeploy_core.lowering.qonnx` folds them
on constants into integer weights behind a ``DequantizeLinear`` and turns them on
activations into ``QuantizeLinear``/``DequantizeLinear`` pairs, which the QDQ
rewrite then makes integer.  The front end must therefore accept them before any
mapper is asked, and type their outputs (float, shaped like the quantised input)
so onnx's inference can go on past them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from deeploy_core.frontend.custom_ops import CustomOpSchema, Shape

QONNX_DOMAIN = "qonnx.custom_op.general"
"""The domain Brevitas 0.13 and qonnx 1.0 write the ops in."""

QONNX_OPS = ("Quant", "Trunc", "BipolarQuant")
"""The ops the lowering understands (their arity is checked there, with a message naming the node)."""

_FLOAT = 1  # onnx.TensorProto.FLOAT


def _float_output(types: Sequence[int | None], attributes: Mapping[str, Any]) -> Sequence[int]:
    """Fake quantisation outputs float32 whatever the input (QONNX defines the ops on float tensors)."""
    return [_FLOAT]


def _like_input(shapes: Sequence[Shape | None], attributes: Mapping[str, Any]) -> Sequence[Shape]:
    if not shapes or shapes[0] is None:
        raise ValueError("input 0 has no static shape")
    return [shapes[0]]


QONNX_SCHEMAS: tuple[CustomOpSchema, ...] = tuple(
    CustomOpSchema(op, QONNX_DOMAIN, shapes=_like_input, types=_float_output) for op in QONNX_OPS)
"""The declarations the front end types the ops' outputs with."""

QONNX_KEYS: frozenset[str] = frozenset(f"{QONNX_DOMAIN}.{op}" for op in QONNX_OPS)
"""The op keys (``domain.op``) the core claims on every platform."""
