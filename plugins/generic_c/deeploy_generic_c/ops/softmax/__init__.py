"""The softmax family: Softmax, LogSoftmax and Hardmax over one axis, and the integer and quantised softmaxes.

``float32`` holds Softmax (the runtime's kernel), ``log_softmax`` and ``hardmax`` the row kernels of
:mod:`deeploy_generic_c.kernels.row_softmax` (float32 and float64), ``integer`` Deeploy's I-BERT ``iSoftmax``,
``ita_max`` Deeploy's ``ITAMax``/``ITAPartialMax`` (with their schemas), and the QOperator
``com.microsoft.QLinearSoftmax`` one module per arithmetic: ``qlinear_float32`` (exact mode, MLAS's exp) then
``qlinear_tflite`` (fixed-point mode, TFLite's); each declines the other's nodes.  That order is the one the
sorted module names gave, pinned by ``test_mapper_precedence.py``; every other op type here has one variant.
"""

from __future__ import annotations

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.softmax import float32, hardmax, integer, ita_max, log_softmax, qlinear_float32, qlinear_tflite

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "Softmax": float32.MAPPERS["Softmax"],
    "LogSoftmax": log_softmax.MAPPERS["LogSoftmax"],
    "Hardmax": hardmax.MAPPERS["Hardmax"],
    "iSoftmax": integer.MAPPERS["iSoftmax"],
    "ITAMax": ita_max.MAPPERS["ITAMax"],
    "ITAPartialMax": ita_max.MAPPERS["ITAPartialMax"],
    "com.microsoft.QLinearSoftmax": (qlinear_float32.MAPPERS["com.microsoft.QLinearSoftmax"]
                                     + qlinear_tflite.MAPPERS["com.microsoft.QLinearSoftmax"]),
}
"""Op type -> mappers, first tried first."""

SCHEMAS: tuple[CustomOpSchema, ...] = ita_max.SCHEMAS
"""``ITAMax``/``ITAPartialMax`` have no ONNX schema."""

NODE_TESTED: tuple[str, ...] = log_softmax.NODE_TESTED + hardmax.NODE_TESTED
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
