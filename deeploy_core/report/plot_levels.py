"""Turn a finished deployer's memory plans into the plain data the memory plot draws.

The plot module knows nothing about deployers; this adapter is the one place
that does. It reads the activation arena (every deployer has one) and, when a
tiler wrapper placed tile buffers in a faster level, that level's map too, so
``compile --plot`` shows every level the generated code uses.
"""

from __future__ import annotations

from typing import Any

from deeploy_core.report.memory_plot import PlotBlock, PlotLevel

#: Name of the arena's level when the deployer has no memory hierarchy.
ARENA_LEVEL_NAME = "arena"


def arena_plot_level(deployer: Any) -> PlotLevel:
    """The activation arena as one level: each buffer over its layer-step lifetime."""
    plan = deployer.memory_plan
    hierarchy = getattr(deployer, "memory_hierarchy", None)
    name = hierarchy.default_level if hierarchy is not None else ARENA_LEVEL_NAME
    capacity = hierarchy.level(name).size if hierarchy is not None else None
    blocks = tuple(
        PlotBlock(block.id, plan.offsets[block.id], block.size, block.lower, block.upper)
        for block in sorted(plan.allocation_problem().blocks, key=lambda block: block.id)
    )
    return PlotLevel(name, capacity, blocks)


def tiled_plot_levels(deployer: Any) -> list[PlotLevel]:
    """Levels a tiler filled with tables, tile buffers and scratch (none for an untiled compile)."""
    level_maps = getattr(deployer, "level_maps", None) or {}
    return [
        PlotLevel(level_map.level, level_map.capacity,
                  tuple(PlotBlock(b.name, b.offset, b.size, b.start, b.end) for b in level_map.blocks))
        for _, level_map in sorted(level_maps.items())
    ]


def memory_plot_levels(deployer: Any) -> list[PlotLevel]:
    """Every level of a deployed network, slowest first (arena level, then tiled levels)."""
    return [arena_plot_level(deployer), *tiled_plot_levels(deployer)]
