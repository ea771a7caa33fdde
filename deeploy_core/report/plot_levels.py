"""Turn a finished compilation's memory plans into the plain data the memory plot draws.

The plot module knows nothing about compilations; this adapter is the one
place that does. It reads the activation arena (every compile has one) and,
when a tiler placed tile buffers in a faster level, that level's map too
(``compilation.results[TilingState]``), so ``compile --plot`` shows every
level the generated code uses.
"""

from __future__ import annotations

from deeploy_core.compilation import Compilation
from deeploy_core.errors import DeeployError
from deeploy_core.memory.hierarchy import MemoryHierarchy
from deeploy_core.report.memory_plot import PlotBlock, PlotLevel
from deeploy_core.tiling.state import TilingState

#: Name of the arena's level when the compile has no memory hierarchy.
ARENA_LEVEL_NAME = "arena"


def arena_plot_level(compilation: Compilation) -> PlotLevel:
    """The activation arena as one level: each buffer over its layer-step lifetime."""
    plan = compilation.memory_plan
    if plan is None:
        raise DeeployError("the memory plot needs a compiled network (its arena is planned by bind)")
    hierarchy = compilation.results.get(MemoryHierarchy)
    name = hierarchy.default_level if hierarchy is not None else ARENA_LEVEL_NAME
    capacity = hierarchy.level(name).size if hierarchy is not None else None
    blocks = tuple(
        PlotBlock(block.id, plan.offsets[block.id], block.size, block.lower, block.upper)
        for block in sorted(plan.allocation_problem().blocks, key=lambda block: block.id)
    )
    return PlotLevel(name, capacity, blocks)


def tiled_plot_levels(compilation: Compilation) -> list[PlotLevel]:
    """Levels a tiler filled with tables, tile buffers and scratch (none for an untiled compile).

    A block of a fused pattern is labelled with the pattern (``fused 2 (conv_a+conv_b): conv_a/out0``): its
    layers' blocks share the level over the whole pattern's steps.
    """
    state = compilation.results.get(TilingState)
    level_maps = state.level_maps if state is not None else {}
    layers = {layer.c_name: layer for layer in compilation.layers}
    node = {c_name: layer.name or f"#{layer.index}" for c_name, layer in layers.items()}
    labels = {name: f"fused {number} ({'+'.join(node.get(n, n) for n in pattern.names)}): "
              for number, pattern in enumerate(state.patterns if state is not None else [], 1) for name in pattern.names}

    def label(block_name: str) -> str:
        """``conv1 in0 (input)``: the ONNX node and tensor names, not the C identifiers of the code."""
        c_name, _, block = block_name.partition("/")
        layer = layers.get(c_name)
        if layer is None:
            return labels.get(c_name, "") + block_name
        tensors = {f"in{i}": t.name for i, t in enumerate(layer.node.inputs) if t.name}
        tensors.update({f"out{i}": t.name for i, t in enumerate(t for t in layer.node.outputs if t.name)})
        key = block.partition(":")[2]
        what = (f"{block} ({tensors[block]})" if block in tensors
                else f"scratch{'' if key in ('', 'scratch') else ' ' + key}" if block.startswith("scratch:") else block)
        return f"{labels.get(c_name, '')}{node[c_name]} {what}"

    return [
        PlotLevel(level_map.level, level_map.capacity,
                  tuple(PlotBlock(label(b.name), b.offset, b.size, b.start, b.end) for b in level_map.blocks))
        for _, level_map in sorted(level_maps.items())
    ]


def memory_plot_levels(compilation: Compilation) -> list[PlotLevel]:
    """Every level of a compiled network, slowest first (arena level, then tiled levels)."""
    return [arena_plot_level(compilation), *tiled_plot_levels(compilation)]
