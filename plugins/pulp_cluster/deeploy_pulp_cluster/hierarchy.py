"""The cluster's memories as data: off-chip L3, the SoC's L2, the cluster's L1 scratchpad.

Tensors live in L2 (their home); kernels only read L1, so every layer is
tiled and its tiles move L2 ↔ L1 by DMA.  Tensors that L2 cannot hold live
in L3, and their tiles pass through staging buffers in L2 (L3 ↔ L2 ↔ L1).  The default sizes are those of a
typical PULP-like SoC (:mod:`deeploy_pulp_cluster.defaults`); the memory level's
options ``l1``/``l2``/``l3`` (``--l1/--l2/--l3``) override them per compile.
"""

from __future__ import annotations

from deeploy_core.plugin_api import MemoryHierarchy, MemoryLevel

from deeploy_pulp_cluster.defaults import DEFAULT_L1_BYTES, DEFAULT_L2_BYTES, DEFAULT_L3_BYTES


def cluster_hierarchy() -> MemoryHierarchy:
    """L3 (64 MiB) ↔ L2 (512 KiB) ↔ L1 (64 KiB); home L2, compute L1."""
    return MemoryHierarchy(
        levels=(
            MemoryLevel("L3", ("L2",), DEFAULT_L3_BYTES),
            MemoryLevel("L2", ("L1", "L3"), DEFAULT_L2_BYTES),
            MemoryLevel("L1", ("L2",), DEFAULT_L1_BYTES),
        ),
        default_level="L2",
        compute_level="L1",
    )


def runtime_level_sizes(hierarchy: MemoryHierarchy | None) -> dict[str, int]:
    """The sizes the emulator (or the SDK) must provide: those of the hierarchy the compile tiled for (the memory
    level's, or a ``--memory-hierarchy`` file's, with the sizes the user gave) for the cluster's levels it sizes,
    the cluster's defaults for the others.

    The runtime must get the very sizes the tiler planned for: a hierarchy with
    a larger L1 than the default would otherwise overrun the real L1.
    """
    sizes = {level.name: int(level.size or 0) for level in cluster_hierarchy().levels}
    if hierarchy is not None:
        sizes.update({level.name: int(level.size) for level in hierarchy.levels
                      if level.name in sizes and level.size is not None})
    return sizes
