"""Which outputs of a fixed-point compile can be held to one quantisation step of ONNX Runtime.

The reference is ONNX Runtime (validate's: its QDQ kernels, graph
optimisations off but for the QLinear fusions).  A layer either rounds as
ONNX Runtime does, and then equals it bit for bit *given the same inputs*,
or rounds on its own and may land one step away.  What a layer is comes from
its row in the report, not from its op name alone:

* ``requantization`` with ``"arithmetic": "tflite"`` (fixed-point mode's
  fused nodes): TFLite's integer arithmetic, a 31-bit multiplier and its
  own roundings (two for convolutions) where ONNX Runtime rounds in
  float32, so **one step** (its ``"rounding"`` then says ``"double"`` or
  ``"single"``, never ``"float32"``);
* ``"arithmetic": "float32"`` (exact mode) or ``"rounding": "float32"`` (the
  integer float32 emulation of Conv/MatMul/Gemm that QOperator files get):
  **exact**;
* QLinearAdd, QLinearMul and the average pools with neither (QOperator files,
  and the rescaling average pool TFLite has no kernel for): the exact result
  requantised once with a 31-bit multiplier, **one step**;
* ``IntegerLookup`` tables: ONNX Runtime's own values in exact mode (exact),
  TFLite's requantisation or the correctly rounded function in fixed-point
  mode (**one step**) — the report row does not say which, so the caller
  passes the mode;
* everything else (QuantizeLinear, DequantizeLinear, float fallbacks) runs as
  ONNX Runtime runs it: exact.

A one-step difference that reaches a later layer is not one step any more:
requantising it to a finer scale, weighting it in a sum or passing it through
a steep activation multiplies it.  So an output is judged at one step only
when at most one layer of its own rounding lies upstream of it and only
value-copying integer ops (reshapes, transposes, concatenations, max pooling
on shared parameters, the final dequantisation) follow that layer.  With
TFLite's arithmetic every requantising layer rounds on its own, so in a
fixed-point compile of an ONNX Runtime-quantised model this holds only for
outputs one requantising layer deep; the per-layer bound holds everywhere
(:mod:`deeploy_core.testing.layerwise`).  Other outputs are still computed,
built and run (and must be repeatable), but their values are not compared.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum
from typing import Any

from deeploy_core.lowering.qdq import VALUE_PRESERVING

QUANTIZATIONS = ("exact", "fixed-point")
OWN_ROUNDING_OPS = frozenset({"QLinearAdd", "QLinearMul", "QLinearAveragePool", "QLinearGlobalAveragePool"})
"""Report op names of the 31-bit integer kernels (no ``arithmetic`` in their row) that round the exact result once,
where ONNX Runtime dequantises, computes in float and quantises again."""
LOOKUP_OP = "IntegerLookup"
"""A quantised element-wise layer as a 256-entry table, computed in the mode's arithmetic at compile time."""
COPYING_OPS = VALUE_PRESERVING | {"DequantizeLinear"}
"""Layers whose outputs are their inputs' values, moved (the lowering's value-preserving ops) or, for
DequantizeLinear, scaled by the step they are judged in: they pass a one-step difference on unchanged."""


class Rounding(IntEnum):
    """How far a tensor may be from ONNX Runtime's, by construction."""

    EXACT = 0
    ONE_STEP = 1
    UNBOUNDED = 2


def rounds_on_its_own(layer: Mapping[str, Any], quantization: str = "fixed-point") -> bool:
    """Whether the layer may round one step away from ONNX Runtime given ONNX Runtime's inputs (see module doc)."""
    if quantization not in QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {QUANTIZATIONS}, got {quantization!r}")
    requantization = layer.get("requantization")
    described = requantization if isinstance(requantization, Mapping) else {}
    if described.get("arithmetic") == "tflite":
        return True
    if described.get("arithmetic") == "float32" or described.get("rounding") == "float32":
        return False
    if layer["op"] == LOOKUP_OP:
        return quantization == "fixed-point"
    return layer["op"] in OWN_ROUNDING_OPS


def tensor_rounding(layers: list[dict[str, Any]], quantization: str = "fixed-point") -> dict[str, Rounding]:
    """The rounding of every layer output, from the report's ``layers`` (in execution order)."""
    rounding: dict[str, Rounding] = {}
    for layer in layers:
        worst = max((rounding.get(tensor["name"], Rounding.EXACT) for tensor in layer["inputs"] if tensor["name"]),
                    default=Rounding.EXACT)
        if rounds_on_its_own(layer, quantization):
            result = Rounding.ONE_STEP if worst is Rounding.EXACT else Rounding.UNBOUNDED
        elif layer["op"] in COPYING_OPS:
            result = worst
        else:
            result = Rounding.EXACT if worst is Rounding.EXACT else Rounding.UNBOUNDED
        for tensor in layer["outputs"]:
            rounding[tensor["name"]] = result
    return rounding


def judged_outputs(layers: list[dict[str, Any]], outputs: list[str], quantization: str = "fixed-point") -> list[str]:
    """The outputs of a compile in ``quantization`` mode that are within one step of ONNX Runtime by construction."""
    rounding = tensor_rounding(layers, quantization)
    return [name for name in outputs if rounding.get(name, Rounding.EXACT) <= Rounding.ONE_STEP]
