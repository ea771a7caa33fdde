"""Which outputs of a fixed-point compile can be held to one quantisation step of ONNX Runtime.

Fixed-point Conv, MatMul and Gemm layers (QLinearConv, QLinearMatMul, QGemm)
requantise with integers that round exactly as ONNX Runtime's float32
requantisation does: like every layer exact mode runs, they are bit exact
*given the same inputs*.  The other fixed-point layers (QLinearAdd,
QLinearMul, the average pools) requantise the exact integer result once where
ONNX Runtime dequantises, computes in float and quantises again: the two may
round a value to neighbouring steps (the compiler's "within one LSB").  A
one-step difference that reaches a later layer is not one step any more:
requantising it to a finer scale, weighting it in a sum or passing it through
a steep activation multiplies it.

So an output is judged at one step only when at most one such rounding layer
lies upstream of it and only value-copying integer ops (reshapes, transposes,
concatenations, max pooling on shared parameters, the final
dequantisation) follow that layer.  Other outputs of a fixed-point compile are
still computed, built and run (and must be repeatable), but their values are
not compared.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from deeploy_core.lowering.qdq import VALUE_PRESERVING

ONE_STEP_OPS = frozenset({"QLinearAdd", "QLinearMul", "QLinearAveragePool", "QLinearGlobalAveragePool"})
"""Report op names of the fixed-point layers that may round one step away from ONNX Runtime given the same inputs
(QLinearConv, QLinearMatMul and QGemm are bit exact, as the layers of exact mode)."""
COPYING_OPS = VALUE_PRESERVING | {"DequantizeLinear"}
"""Layers whose outputs are their inputs' values, moved (the lowering's value-preserving ops) or, for
DequantizeLinear, scaled by the step they are judged in: they pass a one-step difference on unchanged."""


class Rounding(IntEnum):
    """How far a tensor may be from ONNX Runtime's, by construction."""

    EXACT = 0
    ONE_STEP = 1
    UNBOUNDED = 2


def tensor_rounding(layers: list[dict[str, Any]]) -> dict[str, Rounding]:
    """The rounding of every layer output, from the report's ``layers`` (in execution order)."""
    rounding: dict[str, Rounding] = {}
    for layer in layers:
        worst = max((rounding.get(tensor["name"], Rounding.EXACT) for tensor in layer["inputs"] if tensor["name"]),
                    default=Rounding.EXACT)
        if layer["op"] in ONE_STEP_OPS:
            result = Rounding.ONE_STEP if worst is Rounding.EXACT else Rounding.UNBOUNDED
        elif layer["op"] in COPYING_OPS:
            result = worst
        else:
            result = Rounding.EXACT if worst is Rounding.EXACT else Rounding.UNBOUNDED
        for tensor in layer["outputs"]:
            rounding[tensor["name"]] = result
    return rounding


def judged_outputs(layers: list[dict[str, Any]], outputs: list[str]) -> list[str]:
    """The outputs a fixed-point compile must get within one step of ONNX Runtime."""
    rounding = tensor_rounding(layers)
    return [name for name in outputs if rounding.get(name, Rounding.EXACT) <= Rounding.ONE_STEP]
