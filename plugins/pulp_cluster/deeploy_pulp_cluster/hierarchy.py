"""The cluster's memories as data: off-chip L3, the SoC's L2, the cluster's L1 scratchpad.

Tensors live in L2 (their home); kernels only read L1, so every layer is
tiled and its tiles move L2 ↔ L1 by DMA.  The default sizes are those of a
typical PULP-like SoC; ``--l1/--l2/--l3`` override them per compile.
"""

from __future__ import annotations

from deeploy_core.memory import MemoryHierarchy, MemoryLevel

DEFAULT_L1_BYTES = 64 * 1024
DEFAULT_L2_BYTES = 512 * 1024
DEFAULT_L3_BYTES = 8 * 1024 * 1024


def cluster_hierarchy() -> MemoryHierarchy:
    """L3 (8 MiB) ↔ L2 (512 KiB) ↔ L1 (64 KiB); home L2, compute L1."""
    return MemoryHierarchy(
        levels=(
            MemoryLevel("L3", ("L2",), DEFAULT_L3_BYTES),
            MemoryLevel("L2", ("L1", "L3"), DEFAULT_L2_BYTES),
            MemoryLevel("L1", ("L2",), DEFAULT_L1_BYTES),
        ),
        default_level="L2",
        compute_level="L1",
    )


def level_sizes(overrides: dict[str, int] | None, hierarchy: MemoryHierarchy | None = None) -> dict[str, int]:
    """The sizes the emulator (or the SDK) must provide: the cluster's defaults, or the sizes of a user's
    hierarchy file (``hierarchy``) for the levels it names, overridden by ``--l1/--l2/--l3``.

    The runtime must get the very sizes the tiler planned for: a hierarchy file
    with a larger L1 than the default would otherwise overrun the real L1.
    """
    sizes = {level.name: int(level.size or 0) for level in cluster_hierarchy().levels}
    if hierarchy is not None:
        sizes.update({level.name: int(level.size) for level in hierarchy.levels
                      if level.name in sizes and level.size is not None})
    sizes.update({name: int(size) for name, size in (overrides or {}).items() if size is not None})
    return sizes
