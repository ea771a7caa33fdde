"""Assembling and running the code-transformation chain of a layer.

The chain has named points (:class:`~deeploy_core.extensions.TransformationPoint`);
the core's own passes sit between them and the selected plugin passes are
inserted at the point they registered for, in the order they were selected
(see :mod:`deeploy_core.codegen.selection`).  Transformations that the
composed extensions contribute (a tiler's tile loops) run first, on the
layer's kernel call, before any point.
"""

from __future__ import annotations

from typing import Sequence

from deeploy_core.codegen.closure import Closure
from deeploy_core.codegen.execution_block import CodeTransformation, ExecutionBlock
from deeploy_core.codegen.memory_passthrough import MemoryPassthrough
from deeploy_core.codegen.selection import PluginTransformation
from deeploy_core.errors import DeeployError
from deeploy_core.extensions import TransformationPoint
from deeploy_core.ir import NetworkContext


def build_chain(
    plugin_passes: Sequence[PluginTransformation] = (),
    binding_passes: tuple[object, ...] = (),
    contributed: Sequence[CodeTransformation] = (),
) -> list[CodeTransformation]:
    """The passes in the order they run on an execution block."""

    def at(point: TransformationPoint) -> list[CodeTransformation]:
        return [selected.transformation for selected in plugin_passes if selected.extension.point is point]

    return [
        *contributed,
        *at(TransformationPoint.START),
        *binding_passes,  # type: ignore[list-item]
        *at(TransformationPoint.BEFORE_MEMORY_MANAGEMENT),
        MemoryPassthrough(),
        *at(TransformationPoint.AFTER_MEMORY_MANAGEMENT),
        *at(TransformationPoint.BEFORE_CLOSURE),
        Closure(),
        *at(TransformationPoint.END),
    ]


def transformation_name(transformation: object) -> str:
    """How report.json names a pass: its ``name``, else its class name."""
    name = getattr(transformation, "name", None)
    return name if isinstance(name, str) and name else type(transformation).__name__


def apply_chain(block: ExecutionBlock, chain: Sequence[CodeTransformation], ctxt: NetworkContext,
                plugin_passes: Sequence[PluginTransformation] = ()) -> tuple[ExecutionBlock, list[str]]:
    """Run ``chain`` on ``block``; returns the final block and the names of the passes that ran, in order.

    A plugin pass runs inside an error boundary: a crash or a result that is
    not an execution block names the plugin, not the core.
    """
    from_plugins = {id(selected.transformation): selected for selected in plugin_passes}
    names = []
    for transformation in chain:
        selected = from_plugins.get(id(transformation))
        if selected is None:
            block = transformation.apply(block, ctxt)
            names.append(transformation_name(transformation))
            continue
        block = _apply_plugin_pass(selected, block, ctxt)
        names.append(selected.extension.name)
    return block, names


def _apply_plugin_pass(selected: PluginTransformation, block: ExecutionBlock, ctxt: NetworkContext) -> ExecutionBlock:
    what = f"applying code_transformation {selected.extension.name!r} to layer {block.layer.name!r}"
    try:
        result = selected.transformation.apply(block, ctxt)
    except DeeployError:
        raise
    except Exception as error:  # noqa: BLE001 - the error boundary around plugin code
        raise selected.error(what, error) from error
    if not isinstance(result, ExecutionBlock):
        raise selected.error(what, TypeError(f"apply() returned {type(result).__name__}, expected an ExecutionBlock"))
    return result
