"""What a tiled compile costs in memory traffic and space: report.json's ``traffic`` and ``level_peaks``.

Both are keyed by the compile's memory hierarchy rather than by what today's
layer-wise tiler happens to use, so that fused tiling and L3 (issue 22) fill
in numbers without changing the keys a reader or a test relies on:

* ``traffic`` has one entry per *directed link* of the hierarchy (``"L2->L1"``
  for level L2 naming L1 as a neighbour), 0 where nothing moves.  The bytes
  per layer are those the tiling report already gives (``bytes_in`` /
  ``bytes_out``, from :func:`deeploy_core.tiling.layer_layout.bytes_moved`):
  this module only adds them up per link, it does not count tiles again.
* ``level_peaks`` has one entry per level: the most bytes the generated code
  occupies there at once (``memory_levels[level]["used"]``), 0 for a level it
  leaves empty (L3 until tensors live there).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from deeploy_core.memory.hierarchy import MemoryHierarchy


def link_name(source: str, target: str) -> str:
    """A link's key, as the emulator's DMA counters spell it (``"L2->L1"``)."""
    return f"{source}->{target}"


def hierarchy_links(hierarchy: MemoryHierarchy) -> list[str]:
    """Every directed link of the hierarchy, sorted: each level to each of its neighbours."""
    return sorted({link_name(level.name, neighbour) for level in hierarchy.levels
                   for neighbour in level.neighbourNames})


def network_traffic(hierarchy: MemoryHierarchy, layer_bytes: Iterable[tuple[int, int]]) -> dict[str, int]:
    """Bytes per inference over each directed link, from each tiled layer's (bytes fetched, bytes stored).

    Layer-wise tiling moves tiles between the home level and the compute level
    only (directly, in one transfer each), so fetches go home -> compute and
    stores compute -> home; every other link carries 0.  Should a hierarchy
    not list the two as neighbours, their link is added all the same: the
    report says where the bytes really went.
    """
    home, compute = hierarchy.default_level, hierarchy.compute_level
    traffic = dict.fromkeys(hierarchy_links(hierarchy), 0)
    fetch, store = link_name(home, compute), link_name(compute, home)
    traffic.setdefault(fetch, 0)
    traffic.setdefault(store, 0)
    for fetched, stored in layer_bytes:
        traffic[fetch] += fetched
        traffic[store] += stored
    return dict(sorted(traffic.items()))


def level_peaks(hierarchy: MemoryHierarchy, memory_levels: Mapping[str, Mapping[str, Any]]) -> dict[str, int]:
    """Peak bytes in use per level of the hierarchy: ``used`` from ``memory_levels``, 0 for a level it omits."""
    return {level.name: int(memory_levels[level.name]["used"]) if level.name in memory_levels else 0
            for level in hierarchy.levels}
