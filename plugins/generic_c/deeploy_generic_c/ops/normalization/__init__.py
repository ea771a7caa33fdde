"""The normalisation family: Layer/RMS/Lp/MVN/Batch/Instance/Group normalisation and Deeploy's integer norms.

One module per variant: ``float32`` the runtime's float32 kernels (LayerNormalization with output Y only,
BatchNormalization, InstanceNormalization, GroupNormalization), ``layer_norm_stats`` LayerNormalization with its
Mean and InvStdDev outputs or in float64, ``rms_norm``, ``lp_norm`` and ``mvn`` the float32/float64 row kernels,
``integer`` Deeploy's I-BERT ``iLayerNorm``/``iRMSNorm`` and ``no_norm`` its ``iNoNorm`` (with their schemas).
LayerNormalization is the one op type with two variants: ``float32`` is tried first, then ``layer_norm_stats``
(the order the sorted module names ``normalization``, ``normalization_stats`` gave, pinned by
``test_mapper_precedence.py``), so a float32 layer that asks only for Y keeps the runtime's kernel.
"""

from __future__ import annotations

from deeploy_core.plugin_api import CustomOpSchema, NodeMapper
from deeploy_generic_c.ops.normalization import float32, integer, layer_norm_stats, lp_norm, mvn, no_norm, rms_norm

MAPPERS: dict[str, tuple[NodeMapper, ...]] = {
    "iNoNorm": no_norm.MAPPERS["iNoNorm"],
    "iLayerNorm": integer.MAPPERS["iLayerNorm"],
    "iRMSNorm": integer.MAPPERS["iRMSNorm"],
    "LpNormalization": lp_norm.MAPPERS["LpNormalization"],
    "MeanVarianceNormalization": mvn.MAPPERS["MeanVarianceNormalization"],
    "LayerNormalization": float32.MAPPERS["LayerNormalization"] + layer_norm_stats.MAPPERS["LayerNormalization"],
    "BatchNormalization": float32.MAPPERS["BatchNormalization"],
    "InstanceNormalization": float32.MAPPERS["InstanceNormalization"],
    "GroupNormalization": float32.MAPPERS["GroupNormalization"],
    "RMSNormalization": rms_norm.MAPPERS["RMSNormalization"],
}
"""Op type -> mappers, first tried first."""

SCHEMAS: tuple[CustomOpSchema, ...] = no_norm.SCHEMAS + integer.SCHEMAS
"""``iNoNorm``, ``iLayerNorm`` and ``iRMSNorm`` have no ONNX schema (in the order the old module names gave)."""

NODE_TESTED: tuple[str, ...] = lp_norm.NODE_TESTED + mvn.NODE_TESTED + rms_norm.NODE_TESTED
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
