"""The pooling family: max, average, global and Lp pooling in every numeric variant, and the QOperator pools.

``float32`` holds the float MaxPool/AveragePool/GlobalAveragePool/GlobalMaxPool, ``lp_pool`` LpPool and
GlobalLpPool (float32 and float64), ``integer`` the integer MaxPool.  The QOperator
``com.microsoft.QLinearAveragePool``/``QLinearGlobalAveragePool`` come in three arithmetics, one module each,
chosen by the node's ``requantization`` attribute: ``qlinear`` (no attribute: QOperator files), then
``qlinear_float32`` (exact mode), then ``qlinear_tflite`` (fixed-point mode); each declines the other modes.
For ``MaxPool`` the integer mapper is tried before the float one.  Both orders are the ones the sorted module
names gave, pinned by ``test_mapper_precedence.py``.
"""

from __future__ import annotations

from deeploy_core.plugin_api import NodeMapper
from deeploy_generic_c.ops.pooling import float32, integer, lp_pool, qlinear, qlinear_float32, qlinear_tflite

_QLINEAR_POOLS = ("com.microsoft.QLinearAveragePool", "com.microsoft.QLinearGlobalAveragePool")

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "MaxPool": integer.MAPPERS["MaxPool"] + float32.MAPPERS["MaxPool"],
    "AveragePool": float32.MAPPERS["AveragePool"],
    "GlobalAveragePool": float32.MAPPERS["GlobalAveragePool"],
    "GlobalMaxPool": float32.MAPPERS["GlobalMaxPool"],
    "LpPool": lp_pool.MAPPERS["LpPool"],
    "GlobalLpPool": lp_pool.MAPPERS["GlobalLpPool"],
    **{op: qlinear.MAPPERS[op] + qlinear_float32.MAPPERS[op] + qlinear_tflite.MAPPERS[op] for op in _QLINEAR_POOLS},
}
"""Op type -> mappers, first tried first."""

NODE_TESTED = lp_pool.NODE_TESTED
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
