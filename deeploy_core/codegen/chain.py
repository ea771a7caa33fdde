"""Assembling the code-transformation chain of a layer.

The chain has named points (:class:`~deeploy_core.extensions.TransformationPoint`);
the core's own passes sit between them and plugin passes are inserted at the
point they registered for, ordered by ``order`` and then by name.
"""

from __future__ import annotations

from deeploy_core.codegen.closure import Closure
from deeploy_core.codegen.execution_block import CodeTransformation
from deeploy_core.codegen.memory_passthrough import MemoryPassthrough
from deeploy_core.extensions import CodeTransformationExtension, TransformationPoint


def build_chain(
    plugin_passes: list[tuple[CodeTransformationExtension, CodeTransformation]],
    binding_passes: tuple[object, ...] = (),
) -> list[CodeTransformation]:
    """The passes in the order they run on an execution block."""

    def at(point: TransformationPoint) -> list[CodeTransformation]:
        chosen = [(ext.order, ext.name, made) for ext, made in plugin_passes if ext.point is point]
        return [made for _, _, made in sorted(chosen, key=lambda item: (item[0], item[1]))]

    return [
        *at(TransformationPoint.START),
        *binding_passes,  # type: ignore[list-item]
        *at(TransformationPoint.BEFORE_MEMORY_MANAGEMENT),
        MemoryPassthrough(),
        *at(TransformationPoint.AFTER_MEMORY_MANAGEMENT),
        *at(TransformationPoint.BEFORE_CLOSURE),
        Closure(),
        *at(TransformationPoint.END),
    ]
