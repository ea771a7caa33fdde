"""The data-movement family: ops that copy, rearrange or select elements without computing on them, one module per
variant.

``basic`` holds Transpose, Concat, Slice, Pad (constant, reflect, edge) and Gather (int64 indices); ``padding``
Pad with ``mode="wrap"``; ``gather_scatter`` Gather with int32 indices, GatherElements, GatherND and the
Scatter ops; ``split`` Split; ``tile_expand`` Tile and Expand; ``depth_space`` DepthToSpace/SpaceToDepth;
``center_crop_pad`` CenterCropPad; ``col2im`` Col2Im (sliding blocks summed back into an image); ``selection``
Compress and ReverseSequence; ``one_hot`` OneHot; ``triangular`` Trilu.

Gather is mapped by ``gather_scatter`` and ``basic``, Pad by ``basic`` and ``padding``; the first whose parser and
checker accept a layer gives its kernel (each declines what the other takes: int64 indices, the wrap mode).
:data:`VARIANTS` is that order: the sorted names of the modules these were before the family was made
(``center_crop_pad``, ``col2im``, ``depth_space``, ``gather_scatter``, ``movement`` for ``basic``, ``one_hot``,
``padding``, ``selection``, ``split``, ``tile_expand``, ``triangular``), so the generated code did not change;
``plugins/generic_c/tests/test_mapper_precedence.py`` pins the resulting sequences.
"""

from __future__ import annotations

from types import ModuleType

from deeploy_core.plugin_api import NodeMapper
from deeploy_generic_c.ops.movement import (
    basic, center_crop_pad, col2im, depth_space, gather_scatter, one_hot, padding, selection, split, tile_expand,
    triangular,
)
from deeploy_generic_c.parsing.mapper_tables import merged_mappers

VARIANTS: tuple[ModuleType, ...] = (
    center_crop_pad, col2im, depth_space, gather_scatter, basic, one_hot, padding, selection, split, tile_expand,
    triangular,
)
"""The variant modules, first tried first for an op type that several of them map."""


MAPPERS: dict[str, tuple[NodeMapper, ...]] = merged_mappers(VARIANTS)
"""Op type -> mappers, first tried first (in :data:`VARIANTS` order)."""

NODE_TESTED: tuple[str, ...] = (center_crop_pad.NODE_TESTED + col2im.NODE_TESTED + depth_space.NODE_TESTED
                                + gather_scatter.NODE_TESTED + one_hot.NODE_TESTED + selection.NODE_TESTED
                                + tile_expand.NODE_TESTED + triangular.NODE_TESTED)
"""Ops checked by ONNX's node tests only (:mod:`deeploy_generic_c.verification`)."""
