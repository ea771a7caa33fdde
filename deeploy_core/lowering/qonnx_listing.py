"""``supported-ops`` rows for QONNX's ops, which every platform accepts because the core lowers them.

No mapper handles ``Quant``, ``Trunc`` or ``BipolarQuant``: they are rewritten
into standard ops before mapping (:mod:`deeploy_core.lowering.qonnx`), so the
platform's operator table would not show them.  These rows say that they are
accepted, what they become and under which conditions, including that
sub-byte weights take one byte each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deeploy_core.frontend.qonnx_ops import QONNX_DOMAIN

_EVIDENCE = ("tests/test_qonnx_lowering.py: the lowered graphs equal a numpy reading of QONNX's definitions bit "
             "for bit on ONNX Runtime (every bit width, signedness, narrow range and rounding mode, with ties and "
             "saturation) "
             "and compile to C that equals ONNX Runtime; tests/quant/test_brevitas_exports.py: Brevitas' QONNX exports "
             "equal qonnx's executor (0 LSB)")

_OPS: tuple[tuple[str, int, str], ...] = (
    ("Quant", 4,
     "Lowered before mapping. On constants (weights, bias) folded to integers behind DequantizeLinear: int8/uint8 up "
     "to 8 bits (weights of 2-7 bits, e.g. 4-bit, are stored one per byte), int32 above (zero point 0); every QONNX "
     "rounding mode (ROUND, HALF_EVEN, CEIL, FLOOR, UP, DOWN, HALF_UP, HALF_DOWN); per tensor or per axis. On "
     "activations: 2-8 bits, integer zero point, rounding ROUND -> QuantizeLinear, a Clip when the range is narrower "
     "than int8/uint8, DequantizeLinear."),
    ("Trunc", 6,
     "Lowered before mapping (Brevitas' TruncAvgPool2d; version 2, six inputs): after an AveragePool of quantised "
     "values with rounding ROUND, an integer depthwise window sum (QLinearConv); otherwise the integer sum is "
     "recomputed (Div, Round), shifted by its power of two and rounded with its mode (any of QONNX's) in float ops, "
     "then QuantizeLinear -> DequantizeLinear with the output scale; output 2-8 bits. Version 1 (five inputs) on "
     "constants only."),
    ("BipolarQuant", 2,
     "On constants only: folded to +1/-1 weights stored as int8 behind DequantizeLinear."),
)


def qonnx_rows(platforms: Sequence[str]) -> list[dict[str, Any]]:
    """One row per QONNX op, in ``supported-ops --json``'s row format, listed on ``platforms``."""
    rows = []
    for op, arity, constraints in _OPS:
        inputs = ["float32"] * arity
        rows.append({
            "op": f"{QONNX_DOMAIN}.{op}",
            "kernel": f"{op} lowered",
            "signature": f"{', '.join(inputs)} -> float32",
            "input_types": inputs,
            "output_types": ["float32"],
            "constraints": constraints,
            "source": "core lowering",
            "platforms": sorted(platforms),
            "tiling": {"constraint": "lowered", "description": "rewritten into standard ops, which tile as they do"},
            "verification": [{"status": "reference", "evidence": _EVIDENCE}],
        })
    return rows
